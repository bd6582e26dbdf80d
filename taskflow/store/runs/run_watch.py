"""Waking those who wait on a run: the timeline trigger's channel (``run_watch.sql``).

A statement inserting lines of a run entering a state, opening a slot or ending notifies
:data:`CHANNEL` (once per transaction); an awaited start listens on it and re-reads its run.
"""

from __future__ import annotations

from typing import Final

from taskflow.store.common import sql

#: The statements of ``runs/run_watch.sql`` (the trigger and its function).
SQL = sql.statements("runs/run_watch")

#: The channel the trigger notifies (written in the function's text too).
CHANNEL: Final = "taskflow_runs"
#: The function and trigger, as the schema declares them (``schema_extras``).
FUNCTION: Final = ("run_moved_notify", SQL["watch_function"])
TRIGGER: Final = ("audit_event_run_moved", SQL["watch_trigger"])
