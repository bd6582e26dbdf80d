"""Retention: how long a workflow's ended runs are kept before the worker prunes them.

Pure: a workflow's ``retention`` (a real duration in the DSL) or the global
``TASKFLOW_RETENTION_DAYS``; off when neither is set. What a prune removes and
keeps is in ``store/operate/retention.py`` and docs/operations.md ("Retention").
"""

from __future__ import annotations

import math
from datetime import datetime, timedelta

from taskflow.core.definition.budgets import Budget

_UNIT = {"minutes": timedelta(minutes=1), "hours": timedelta(hours=1), "days": timedelta(days=1)}
#: The shortest retention a workflow may set: an ended run stays at least a day.
SHORTEST = timedelta(days=1)


def valid(budget: object) -> bool:
    """A real duration of at least :data:`SHORTEST`."""
    return (
        isinstance(budget, Budget)
        and budget.kind == "real"
        and budget.unit in _UNIT
        and isinstance(budget.amount, int | float)
        and math.isfinite(budget.amount)
        and budget.amount * _UNIT[budget.unit] >= SHORTEST
    )


def age(workflow_retention: Budget | None, default_days: int | None) -> timedelta | None:
    """How long ended runs of a workflow are kept: its own retention, else the default;
    None: kept for ever."""
    if workflow_retention is not None:
        return workflow_retention.amount * _UNIT[workflow_retention.unit]
    if default_days is not None:
        return timedelta(days=default_days)
    return None


def cutoff(now: datetime, kept: timedelta) -> datetime:
    """Runs that ended before this instant are pruned."""
    return now - kept


def days(kept: timedelta) -> int:
    """The age in whole days, for the record of a prune (rounded up)."""
    return math.ceil(kept / timedelta(days=1))
