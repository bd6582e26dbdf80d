"""Automations a workflow's leads manage (docs/automations.md).

May import taskflow.core, taskflow.store.
"""
