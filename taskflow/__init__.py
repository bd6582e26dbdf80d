"""taskflow: human work with deadlines.

The public workflow-definition vocabulary (``Workflow``, ``State``, ``Slot``...)
is re-exported here so definitions read ``from taskflow import Workflow``.
See docs/definitions.md.
"""

from __future__ import annotations

from taskflow.core.definition import (
    Buffer,
    Event,
    Exponential,
    Expr,
    Field,
    Fixed,
    HookContext,
    Linear,
    Move,
    OnError,
    Precondition,
    Route,
    Slot,
    State,
    Workflow,
    all_satisfied,
    any_satisfied,
    budget_by,
    business,
    count,
    every,
    item,
    migration,
    milestone,
    payload,
    principal,
    priority_by,
    real,
    reminder,
    result,
    subject,
    timeout,
    who,
)

__version__ = "0.1.0"

__all__ = [
    "Buffer",
    "Event",
    "Exponential",
    "Expr",
    "Field",
    "Fixed",
    "HookContext",
    "Linear",
    "Move",
    "OnError",
    "Precondition",
    "Route",
    "Slot",
    "State",
    "Workflow",
    "__version__",
    "all_satisfied",
    "any_satisfied",
    "budget_by",
    "business",
    "count",
    "every",
    "item",
    "migration",
    "milestone",
    "payload",
    "principal",
    "priority_by",
    "real",
    "reminder",
    "result",
    "subject",
    "timeout",
    "who",
]
