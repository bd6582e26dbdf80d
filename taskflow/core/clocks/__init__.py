"""Deadlines and time: SLA clock ledgers, timers and their firing, business calendars.

May import taskflow.core.common, core.definition and taskflow.errors (pure).
"""
