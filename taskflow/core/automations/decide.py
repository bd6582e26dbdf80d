"""What one event does to one automation: act, skip (and why), or stop a loop.

The worker asks this for each published automation of the event's workflow; simulate
asks it for each recorded event. Both keep the same enrollment memory, so a simulation
says exactly what the worker would have done.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from taskflow.core.automations import document
from taskflow.core.automations.document import Action, Automation
from taskflow.core.definition.conditions import expr as ex

#: How many automation hops an event may be away from a person's (or the engine's) act.
#: An event an automation caused carries ``depth`` = its cause's depth + 1; beyond this
#: the rule is stopped and flagged instead of acting (two rules feeding each other).
MAX_DEPTH = 3


@dataclass(frozen=True)
class Event:
    """A recorded event as an automation sees it (a timeline/outbox line)."""

    id: str
    kind: str
    at: datetime
    run_id: str = ""
    subject_key: str = ""
    subject: Mapping[str, Any] = field(default_factory=dict)
    facts: Mapping[str, Any] = field(default_factory=dict)
    actor: str = ""
    #: 0 for events people or the engine caused; n for the n-th automation hop.
    depth: int = 0


@dataclass(frozen=True)
class Decision:
    """``act`` with the actions, or ``skip``/``loop`` with the reason."""

    outcome: str
    reason: str = ""
    actions: tuple[Action, ...] = ()

    @property
    def acts(self) -> bool:
        return self.outcome == "act"


@dataclass
class Enrollments:
    """When each subject last set a rule off (the enrollment policy's memory)."""

    last: dict[str, datetime] = field(default_factory=dict)


def actor_id(automation_id: str) -> str:
    """The actor its actions are recorded under on the timeline."""
    return f"automation:{automation_id}"


def once_key(automation_id: str, version: int, event_id: str) -> str:
    """The key that makes acting on an event happen once (a unique row in the store)."""
    return f"automation:{automation_id}:v{version}:event:{event_id}"


def env_of(event: Event) -> ex.Env:
    """What a rule's conditions read: the subject, the actor, the event's facts (``item``)."""
    facts = {"kind": event.kind, "run_id": event.run_id, **event.facts}
    return ex.Env(subject=event.subject, actor={"login": event.actor}, item=facts)


def skips(rule: Automation, event: Event, env: ex.Env) -> bool:
    """Whether :func:`decide` skips ``event`` whatever the rule remembers (its kind, a trigger
    filter or a condition does not hold), without saying why; ``env``: :func:`env_of` the
    event, built once for every rule asked about it. A loop is not a skip."""
    if event.kind != rule.trigger:
        return True
    for key, wanted in rule.filters.items():
        if str(event.facts.get(key)) != wanted:
            return True
    if event.depth >= MAX_DEPTH:
        return False
    return not all(ex.matches(cond, env) for cond in rule.conditions)


def holds(until: Any, event: Event) -> bool:
    """Whether a wait node's condition (``until``, as written: it was checked at save)
    holds for ``event`` now (its subject as it is now)."""
    found: list[Any] = []
    cond = document.condition(until, "/until", found)
    return cond is not None and ex.matches(cond, env_of(event))


def decide(rule: Automation, event: Event, seen: Enrollments) -> Decision:
    """Decide and, when acting, remember the enrollment in ``seen``."""
    if event.kind != rule.trigger:
        return Decision("skip", "another event kind")
    for key, wanted in rule.filters.items():
        if str(event.facts.get(key)) != wanted:
            return Decision("skip", f"{key} is not {wanted!r}")
    if event.depth >= MAX_DEPTH:
        return Decision("loop", f"event is {event.depth} automation hops deep (limit {MAX_DEPTH})")
    env = env_of(event)
    for i, cond in enumerate(rule.conditions):
        if not ex.matches(cond, env):
            return Decision("skip", f"condition {i} does not hold: {ex.describe(cond)}")
    subject = event.subject_key or event.run_id
    before = seen.last.get(subject)
    if before is not None and rule.policy == "once_per_subject":
        return Decision("skip", "already enrolled this subject")
    if before is not None and rule.window is not None and event.at - before < rule.window:
        return Decision("skip", "already enrolled this subject in the window")
    seen.last[subject] = event.at
    return Decision("act", actions=rule.actions)
