"""worker layer (see docs/architecture.md)."""
