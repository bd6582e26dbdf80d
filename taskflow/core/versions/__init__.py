"""Deployed versions: what start-up decides, recorded shapes, ``stay`` migration steps.

May import taskflow.core.definition, core.runs and core.common (pure).
"""
