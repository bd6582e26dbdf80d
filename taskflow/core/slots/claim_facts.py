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
declaration (:func:`decl_key`), the facts the statement needs: which
declarations have milestones (a slot of one without clock rows still has its
clocks to start: general path), which have a milestone whose calendar chain asks
the holder (``core/clocks/chain.py``: a claim moves that clock onto the new
holder's calendar, which needs the holder's row and calendar arithmetic, so the
general path claims it, in the one transaction that moves the clock) and which
reminder indexes hang on ``assigned``, written once per catalog as one text
(:attr:`ClaimFacts.text`; why one text and not arrays: ``store/slots/claims.py``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from taskflow.core.clocks import chain
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
    #: Keys of slot declarations with a milestone whose calendar chain asks the holder.
    chained: tuple[str, ...] = ()
    #: The facts as the claim statement reads them: a line a fact, each between newlines,
    #: ``M <decl>`` (declaring), ``H <decl>`` (chained), ``R <decl> <index>`` (reminder), so
    #: SQL finds one with ``strpos`` (``store/slots/claims.sql``). Names never hold a newline.
    text: str = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        lines = [f"M {k}" for k in self.declaring] + [f"H {k}" for k in self.chained]
        lines += [f"R {k}" for k in self.assigned_reminders]
        object.__setattr__(self, "text", "\n" + "".join(f"{line}\n" for line in lines))


def claim_facts(definitions: Iterable[Definition]) -> ClaimFacts:
    """The facts for every slot declaration of ``definitions``."""
    declaring, chained, reminders = [], [], []
    for definition in definitions:
        for state, slot in definition.slots():
            key = decl_key(definition.name, definition.version, state.name, slot.name)
            if slot.milestones:
                declaring.append(key)
            if chain.asks_holder(slot.milestones):
                chained.append(key)
            reminders += [
                f"{key} {index}"
                for index, reminder in enumerate(slot.reminders)
                if reminder.milestone == ASSIGNED
            ]
    return ClaimFacts(tuple(declaring), tuple(reminders), tuple(chained))
