"""Whether a run's most recent state change may be undone, and what undoing it returns to.

Pure. The change is the run's latest ``state.entered`` line (the timeline, literal). An
undo re-enters the state the run stood in before it (the previous ``state.entered``
line's state) and is written as a ``state.entered`` line with ``via`` "undo" and
``reverses`` naming the rewound line (``core/history/visits.py`` reads it); undoing an
undo is a redo, which names the undo's line. Only what a person did may be taken back:
a move marked ``undoable`` (its ``run.moved`` line sits just before the entry), or the
completion that routed the run out of a state marked ``undoable``. Automatic steps,
timers, operators' gotos, redirects, starts and error paths are not, nor is anything
after a child run started or an outsider's link was used: those reached beyond the run.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime

from taskflow.core.common import refusals
from taskflow.core.common.refusal_codes import RefusalCode
from taskflow.core.definition import audience as au
from taskflow.core.definition.undoing import Undoable
from taskflow.core.definition.workflow import Definition
from taskflow.core.history.visits import ENTERED, Line

#: Timeline kinds after which the change reached beyond the run and stands.
BEYOND_THE_RUN = frozenset({"child.started", "run.child_started", "link.used"})


class NotUndoable(refusals.Refusal, code=RefusalCode.NOT_UNDOABLE):
    """The run's latest state change may not be undone (``reason`` says why)."""

    reason = refusals.Fact(str)


class NoHistory(refusals.Refusal, code=RefusalCode.NO_HISTORY):
    """The run has not changed state since it started: there is nothing to undo."""


class UndoWindowExpired(refusals.Refusal, code=RefusalCode.UNDO_WINDOW_EXPIRED):
    """The change may be undone only until ``until``, which has passed."""

    until = refusals.Fact(refusals.moment)


class NotSameActor(refusals.Refusal, code=RefusalCode.NOT_SAME_ACTOR):
    """Only ``actor``, who made the change, may undo it."""

    actor = refusals.Fact(str)


@dataclass(frozen=True)
class Target:
    """What an undo (or redo) does: rewind ``reverses`` (a ``state.entered`` line) and
    re-enter ``state``, which the run left at ``left_at``; ``redo`` when the rewound
    line is itself an undo."""

    reverses: int
    state: str
    left_at: datetime
    redo: bool
    policy: Undoable


def _entries(lines: Iterable[Line]) -> list[Line]:
    return sorted((ln for ln in lines if ln.kind == ENTERED), key=lambda ln: ln.id)


def _policy(definition: Definition, lines: Sequence[Line], entry: Line, source: str) -> Undoable:
    """The ``undoable`` policy that covers ``entry``, which left ``source``; refused if none."""
    via = str(entry.details.get("via", ""))
    if not definition.has_state(source):
        raise NotUndoable(f"The state {source!r} is no longer in the definition.", reason="gone")
    state = definition.state(source)
    if via == "move":
        moved = [ln for ln in lines if ln.kind == "run.moved" and ln.id < entry.id]
        name = str(moved[-1].details.get("move", "")) if moved else ""
        move = next((m for m in state.moves if m.name == name), None)
        if move is not None and move.undoable is not None:
            return move.undoable
        raise NotUndoable(
            f"The move {name!r} out of {source} is not marked undoable in the definition.",
            reason="not marked undoable",
        )
    if via == "route" and state.undoable is not None:
        return state.undoable
    what = {"route": f"the completion of {source} is not marked undoable"}.get(
        via, f"the run entered it by {via or 'the system'}, not by a person's move"
    )
    raise NotUndoable(f"This state change cannot be undone: {what}.", reason=what)


def target(
    definition: Definition,
    lines: Iterable[Line],
    *,
    actor: str,
    principal: object,
    subject: dict[str, object] | None = None,
    now: datetime,
) -> Target:
    """What undoing the run's latest state change does, or the typed refusal saying why not.

    ``lines`` is the run's timeline (every kind; the entries and what followed them are
    read). ``principal`` is checked against the policy's ``by``.
    """
    every = sorted(lines, key=lambda ln: ln.id)
    entries = _entries(every)
    if len(entries) < 2:
        raise NoHistory("The run has not changed state since it started: nothing to undo.")
    latest, before = entries[-1], entries[-2]
    beyond = [ln.kind for ln in every if ln.id > latest.id and ln.kind in BEYOND_THE_RUN]
    if beyond:
        raise NotUndoable(
            f"Since the run entered {latest.details.get('state')}, {beyond[0]} reached beyond "
            "the run: undoing would not take it back.",
            reason=beyond[0],
        )
    rewound = latest
    while rewound.reverses is not None:  # an undo or redo is covered by what it rewound
        found = next((e for e in entries if e.id == rewound.reverses), None)
        if found is None:
            raise NotUndoable(
                f"The line {rewound.reverses} this undo names is gone.", reason="history pruned"
            )
        rewound = found
    source_entry = _entry_before(entries, rewound)
    policy = _policy(definition, every, rewound, str(source_entry.details.get("state", "")))
    if policy.within is not None and now > latest.at + policy.within:
        until = latest.at + policy.within
        raise UndoWindowExpired(
            f"This change could be undone until {until.isoformat()}; that has passed.",
            until=until.isoformat(),
        )
    if policy.same_actor and latest.actor != actor:
        raise NotSameActor(
            f"Only {latest.actor}, who made this change, may undo it.", actor=latest.actor
        )
    if policy.by is not None:
        allowed = au.compile(policy.by, subject or {})
        if not allowed.admits(au.principal_keys(principal)):
            raise NotUndoable(
                f"You may not undo this change: undoing it is for {allowed}.",
                reason=f"only {allowed} may undo it",
            )
    return Target(
        reverses=latest.id,
        state=str(before.details.get("state", "")),
        left_at=latest.at,
        redo=latest.reverses is not None,
        policy=policy,
    )


def _entry_before(entries: Sequence[Line], entry: Line) -> Line:
    earlier = [e for e in entries if e.id < entry.id]
    if not earlier:
        raise NoHistory("The run has not changed state since it started: nothing to undo.")
    return earlier[-1]
