"""taskflow: human work with deadlines.

The public workflow-definition vocabulary (``Workflow``, ``State``, ``Slot``...)
is re-exported here so definitions read ``from taskflow import Workflow``.
See docs/definitions.md.
"""

from __future__ import annotations

from taskflow.core.definition import (
    Buffer,
    Event,
    Expr,
    Field,
    HookContext,
    Move,
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
    item,
    migration,
    milestone,
    payload,
    principal,
    priority_by,
    real,
    reminder,
    subject,
    timeout,
    who,
)

__version__ = "0.1.0"

__all__ = [
    "Buffer",
    "Event",
    "Expr",
    "Field",
    "HookContext",
    "Move",
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
    "item",
    "migration",
    "milestone",
    "payload",
    "principal",
    "priority_by",
    "real",
    "reminder",
    "subject",
    "timeout",
    "who",
]
