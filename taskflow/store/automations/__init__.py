"""Automations as stored (docs/automations.md): the rules and the once-per-event acts.

May import taskflow.core and taskflow.store.common.
"""
