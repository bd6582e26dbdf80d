"""Unit tests of taskflow.core.definition (the workflow DSL) and its loader and CLI."""
