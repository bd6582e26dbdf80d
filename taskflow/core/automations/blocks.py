"""The blocks an automation is built from: triggers and actions, one fixed safe list.

Conditions are the project's own expressions (core/definition/conditions, their JSON
form); the roots an automation may read are listed in :data:`CONDITION_ROOTS`.
An action names its parameters here and nothing else may be sent: automations never
run code, only these verbs, each going through the same use case an operator's click
would (with actor ``automation:<id>``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

#: Event kinds an automation can start on (the timeline/outbox kinds they listen to).
TRIGGERS: Mapping[str, str] = {
    "slot.opened": "a slot opened (a task became claimable)",
    "slot.claimed": "someone claimed a slot",
    "slot.completed": "a slot was completed",
    "slot.breached": "a slot's SLA was breached",
    "clock.at_risk": "an SLA clock reached its at-risk point",
    "clock.forecast_at_risk": "a slot's breach forecast reached its threshold",
    "run.state_entered": "a run entered a state (trigger.state narrows it)",
    "run.ended": "a run ended",
    "subject.changed": "a run's subject fields changed",
    "event.raised": "an event was raised on a run (trigger.event narrows it)",
}

#: What a trigger may narrow on, by kind.
TRIGGER_FILTERS: Mapping[str, tuple[str, ...]] = {
    "run.state_entered": ("state",),
    "event.raised": ("event",),
    "slot.opened": ("slot",),
    "slot.claimed": ("slot",),
    "slot.completed": ("slot",),
    "slot.breached": ("slot",),
}

#: Roots a condition may read: the run's subject, the event's own facts, who acted.
CONDITION_ROOTS = ("subject", "event", "actor")  # event.<fact> is the item root


@dataclass(frozen=True)
class ActionBlock:
    """One verb: its required and optional text parameters, and what it does."""

    required: tuple[str, ...]
    optional: tuple[str, ...] = ()
    meaning: str = ""
    #: Optional parameters that are a flat object of short texts or numbers (a payload).
    objects: tuple[str, ...] = ()
    #: Required parameters that are a condition (an expression, as in ``conditions``).
    expressions: tuple[str, ...] = ()


ACTIONS: Mapping[str, ActionBlock] = {
    "assign": ActionBlock(("to",), ("slot",), "assign the slot to a principal (user:<id>)"),
    "add_candidate": ActionBlock(("to",), ("slot",), "add a candidate key to the slot"),
    "add_label": ActionBlock(("label",), (), "add a label to the run"),
    "comment": ActionBlock(("text",), (), "post a comment on the run's timeline"),
    "notify": ActionBlock(("to", "message"), (), "notify a principal, role or group"),
    "escalate": ActionBlock(("to",), ("slot",), "escalate the slot to someone"),
    "raise_event": ActionBlock(
        ("event",), ("slot",), "raise a named event on the run", objects=("payload",)
    ),
    "set_field": ActionBlock(("field", "value"), (), "set one subject field"),
    "start_run": ActionBlock(("workflow",), (), "start a run of a workflow on the subject"),
    "webhook": ActionBlock(
        ("endpoint",),
        ("message",),
        "post an automation.webhook event to a registered webhook endpoint (its id)",
    ),
    # A node rather than a verb: the actions after it wait (stored, resumed once).
    "delay": ActionBlock(
        ("minutes",),
        ("business",),
        "wait before the next action: real minutes, or working minutes on the workflow's "
        "calendar (business: true)",
    ),
    "wait": ActionBlock(
        ("timeout_minutes",),
        (),
        "wait until a condition holds (until), at most timeout_minutes of real time; then "
        "the next actions go on either way",
        expressions=("until",),
    ),
}

#: The longest delay node, in minutes (a year, as a delayed start).
MAX_DELAY_MINUTES = 366 * 24 * 60

#: Enrollment policies: how often one subject may set the automation off.
ENROLLMENT_POLICIES = ("every_time", "once_per_subject", "once_per_window")
