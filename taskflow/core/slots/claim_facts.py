"""What claiming a slot does to its deadlines, as facts one SQL statement can apply.

Claiming changes one thing the deadlines depend on (``deadlines.sync_clocks``):
the slot's ``assigned`` clock is met at the claim instant. So, for a slot whose
clocks are already started and whose ``assigned`` clock is not paused, a claim
needs no calendar arithmetic: the clock is met; its breach and at-risk timers and the
reminders of ``assigned`` are no longer wanted (``deadlines.slot_timers``); the
slot's nearest due instant becomes the nearest among its other running clocks
(their due instants are stored beside the ledgers); the timeline gains the
``clock.met`` line. claim-next does exactly that in its claim statement
(``store/slots/claims.py``), and leaves every other slot to the general path.

What SQL cannot know is the definitions, so this module lists, per slot
declaration (:func:`decl_key`), the two facts the statement needs: which
declarations have milestones (a slot of one without clock rows still has its
clocks to start: general path) and which reminder indexes hang on
``assigned``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from taskflow.core.definition.workflow import Definition

#: The milestone a claim meets.
ASSIGNED = "assigned"


def decl_key(workflow: str, version: int, state: str, slot: str) -> str:
    """A slot declaration's key (names are identifiers: a space never occurs in them)."""
    return f"{workflow} {version} {state} {slot}"


@dataclass(frozen=True)
class ClaimFacts:
    """The definitions' facts a claim statement reads (see the module docs)."""

    #: Keys of slot declarations that declare at least one milestone.
    declaring: tuple[str, ...]
    #: ``<decl key> <reminder index>`` of every reminder on the ``assigned`` milestone.
    assigned_reminders: tuple[str, ...]


def claim_facts(definitions: Iterable[Definition]) -> ClaimFacts:
    """The facts for every slot declaration of ``definitions``."""
    declaring, reminders = [], []
    for definition in definitions:
        for state, slot in definition.slots():
            key = decl_key(definition.name, definition.version, state.name, slot.name)
            if slot.milestones:
                declaring.append(key)
            reminders += [
                f"{key} {index}"
                for index, reminder in enumerate(slot.reminders)
                if reminder.milestone == ASSIGNED
            ]
    return ClaimFacts(tuple(declaring), tuple(reminders))
