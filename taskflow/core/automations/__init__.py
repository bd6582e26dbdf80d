"""End-user automations: rules a workflow's leads write as JSON (docs/automations.md).

Pure: the blocks (triggers, conditions, actions), reading and validating a document
with JSON-pointer problems, deciding what one event does, and simulating a rule
against recorded events. May import taskflow.core.definition and core.common.
"""
