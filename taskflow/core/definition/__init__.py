"""Workflow definitions: the Python DSL, its validation, and its JSON/Mermaid renderings.

Modules: :mod:`.expr` (conditions, three-valued evaluation) and
:mod:`.expr_data` (their JSON form, the paths they read); :mod:`.who` (who may
act, as expressions) and :mod:`.audience` (their audience keys and residual
rules); :mod:`.budgets` (business and real durations); :mod:`.fields` (payload
fields); :mod:`.sla` (milestones, reminders, timeouts, priority);
:mod:`.labels`; :mod:`.model` (states, slots, routes, moves); :mod:`.workflow`
(the :class:`Workflow` class and :class:`Definition`); :mod:`.validate` with
:mod:`.checking` and :mod:`.slot_checks`; :mod:`.problems`; :mod:`.render`
(JSON document, digest, Mermaid); :mod:`.runtime` (the pure questions the
engine asks of a definition).

The names below are the DSL vocabulary, re-exported by ``taskflow``.
"""

from __future__ import annotations

from taskflow.core.definition import migrations as migration
from taskflow.core.definition.actors import Actor
from taskflow.core.definition.audience import Audience, Rule, who
from taskflow.core.definition.budgets import budget_by, business, real
from taskflow.core.definition.checks.problems import DefinitionError, Problem
from taskflow.core.definition.children import Catch, Child, child
from taskflow.core.definition.conditions.expr import (
    Expr,
    actor,
    expired,
    item,
    payload,
    principal,
    subject,
)
from taskflow.core.definition.events import Buffer, Event
from taskflow.core.definition.fields import Field, PayloadError
from taskflow.core.definition.model import (
    HookContext,
    Move,
    Precondition,
    Route,
    Slot,
    State,
    all_satisfied,
    any_satisfied,
    count,
)
from taskflow.core.definition.owning import Owns
from taskflow.core.definition.retries import Exponential, Fixed, Linear
from taskflow.core.definition.sla import milestone, priority_by, reminder, timeout
from taskflow.core.definition.steps import OnError, every, result
from taskflow.core.definition.timing_rules.deadline import Deadline
from taskflow.core.definition.timing_rules.expiry import expire
from taskflow.core.definition.undoing import Undoable
from taskflow.core.definition.workflow import Definition, Workflow, define

__all__ = [
    "Actor",
    "Audience",
    "Buffer",
    "Catch",
    "Child",
    "Deadline",
    "Definition",
    "DefinitionError",
    "Event",
    "Exponential",
    "Expr",
    "Field",
    "Fixed",
    "HookContext",
    "Linear",
    "Move",
    "OnError",
    "Owns",
    "PayloadError",
    "Precondition",
    "Problem",
    "Route",
    "Rule",
    "Slot",
    "State",
    "Undoable",
    "Workflow",
    "actor",
    "all_satisfied",
    "any_satisfied",
    "budget_by",
    "business",
    "child",
    "count",
    "define",
    "every",
    "expire",
    "expired",
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
