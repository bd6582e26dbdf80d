"""SLA reports as values and the measures taken on one ended slot.

May import taskflow.core.clocks.clocks, core.runs and core.common (pure).
"""
