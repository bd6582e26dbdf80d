"""Simulate: what a rule would have done over recorded events, without doing anything.

Capped so a year of history cannot tie up the server: at most :data:`MAX_EVENTS`
events and :data:`MAX_DAYS` days; the result says when it stopped early.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import timedelta

from taskflow.core.automations.decide import Decision, Enrollments, Event, decide
from taskflow.core.automations.document import Automation

MAX_EVENTS = 5000
MAX_DAYS = 90


@dataclass(frozen=True)
class Step:
    """One event the rule matched on (its kind at least), and what it decided."""

    event: Event
    decision: Decision


@dataclass(frozen=True)
class Simulation:
    steps: tuple[Step, ...]
    events_read: int
    #: Why it stopped before the end of the events ("" when it read them all).
    capped: str = ""

    @property
    def would_act(self) -> tuple[Step, ...]:
        return tuple(s for s in self.steps if s.decision.acts)


def simulate(rule: Automation, events: Iterable[Event]) -> Simulation:
    """Play ``events`` (oldest first) through ``rule`` with a fresh enrollment memory."""
    seen = Enrollments()
    steps: list[Step] = []
    read, capped, first = 0, "", None
    for event in events:
        first = first or event.at
        if read >= MAX_EVENTS:
            capped = f"stopped after {MAX_EVENTS} events"
            break
        if event.at - first > timedelta(days=MAX_DAYS):
            capped = f"stopped after {MAX_DAYS} days of events"
            break
        read += 1
        if event.kind != rule.trigger:
            continue
        steps.append(Step(event, decide(rule, event, seen)))
    return Simulation(tuple(steps), read, capped)
