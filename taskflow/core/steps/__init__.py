"""Automatic steps, decided purely: their timers, what an outcome does, ``once`` in hooks.

May import taskflow.core.runs, core.definition and core.common (pure).
"""
