"""Moves that touch one slot only: claim, release, assign, and who may complete.

Each function checks the move against the slot as read (which moves a status
allows is ``statuses.MOVES``, the one table) and returns the slot as it should
become, or raises a refusal. The store applies the result with a
guarded statement (status and version in the WHERE clause), so a concurrent
change that slipped in between makes the write miss and the caller re-reads.
"""

from __future__ import annotations

import dataclasses
from datetime import datetime

from taskflow.core.runs import refusals
from taskflow.core.runs.model import CLAIMED, SlotView
from taskflow.core.runs.statuses import SlotMove, after, allows
from taskflow.core.slots import holding


def _moved(
    slot: SlotView,
    move: SlotMove,
    kind: str,
    now: datetime,
    *,
    holder: str | None,
    claimed_at: datetime | None,
) -> SlotView:
    """The slot after ``move``: its new status, holder and claim instant, one version on,
    and its holding recorded as a ``kind`` line would (``holding.moved``)."""
    moved = dataclasses.replace(
        slot,
        status=after(slot.status, move),
        holder=holder,
        claimed_at=claimed_at,
        version=slot.version + 1,
    )
    return holding.moved(moved, kind, now)


def check_version(slot: SlotView, expected: int | None) -> None:
    """Refuse when the caller acted on a copy older than the slot."""
    if expected is not None and expected != slot.version:
        raise refusals.StaleVersion(
            f"The slot changed since you loaded it (your copy is version {expected}, it is now "
            f"version {slot.version}); reload it and try again.",
            current_version=slot.version,
        )


def _refuse_unless_claimable(slot: SlotView, actor_id: str) -> None:
    if allows(slot.status, SlotMove.CLAIM):
        return
    if slot.status == CLAIMED:
        who = "you" if slot.holder == actor_id else repr(slot.holder)
        since = slot.claimed_at.isoformat() if slot.claimed_at else "an unknown time"
        raise refusals.AlreadyClaimed(
            f"The slot is already claimed by {who} (since {since}); "
            "pick another task, or ask a delegate to reassign it.",
            holder=slot.holder,
            claimed_at=slot.claimed_at,
        )
    raise refusals.SlotNotOpen(
        f"The slot is {slot.status}, not open: there is nothing to do on it any more.",
        status=slot.status,
    )


def is_candidate(slot: SlotView, keys: frozenset[str]) -> bool:
    return slot.audience.admits(keys)


def is_delegate(slot: SlotView, keys: frozenset[str]) -> bool:
    return bool(slot.delegates.keys) and slot.delegates.admits(keys)


def claim(
    slot: SlotView, actor_id: str, keys: frozenset[str], now: datetime, expected: int | None
) -> SlotView:
    """The slot held by ``actor_id``; refused unless open, current and the actor a candidate."""
    check_version(slot, expected)
    _refuse_unless_claimable(slot, actor_id)
    if not is_candidate(slot, keys):
        raise refusals.NotCandidate(
            f"You are not a candidate for this slot (it is for {slot.audience}).",
            audience=str(slot.audience),
        )
    return _moved(slot, SlotMove.CLAIM, "slot.claimed", now, holder=actor_id, claimed_at=now)


def take(slot: SlotView, actor_id: str, now: datetime) -> SlotView:
    """The slot held by ``actor_id`` with no candidacy check: an SLA dry run plays the
    claims it is told of (``core/clocks/dry_run.py``); refused unless open."""
    _refuse_unless_claimable(slot, actor_id)
    return _moved(slot, SlotMove.CLAIM, "slot.claimed", now, holder=actor_id, claimed_at=now)


def release(
    slot: SlotView, actor_id: str, keys: frozenset[str], now: datetime, expected: int | None = None
) -> SlotView:
    """The slot back in the pool; by its holder or a delegate."""
    check_version(slot, expected)
    if not allows(slot.status, SlotMove.RELEASE):
        raise refusals.SlotNotOpen(
            f"The slot is {slot.status}; only a claimed slot can be released.", status=slot.status
        )
    if slot.holder != actor_id and not is_delegate(slot, keys):
        raise refusals.NotHolder(
            f"Only the holder ({slot.holder!r}) or a delegate may release this slot.",
            holder=slot.holder,
        )
    return _moved(slot, SlotMove.RELEASE, "slot.released", now, holder=None, claimed_at=None)


def assign(
    slot: SlotView,
    actor_id: str,
    actor_keys: frozenset[str],
    target_id: str,
    target_keys: frozenset[str],
    now: datetime,
    expected: int | None,
) -> SlotView:
    """The slot held by ``target_id``; by its holder or a delegate, to a candidate."""
    check_version(slot, expected)
    check_may_assign(slot, actor_id, actor_keys)
    if not is_candidate(slot, target_keys):
        raise refusals.NotCandidate(
            f"{target_id!r} is not a candidate for this slot (it is for {slot.audience}); "
            "assign it to a candidate.",
            audience=str(slot.audience),
        )
    return _moved(slot, SlotMove.ASSIGN, "slot.assigned", now, holder=target_id, claimed_at=now)


def check_may_assign(slot: SlotView, actor_id: str, actor_keys: frozenset[str]) -> None:
    """Refuse unless the slot may be assigned and the actor is its holder or a delegate."""
    if not allows(slot.status, SlotMove.ASSIGN):
        raise refusals.SlotNotOpen(
            f"The slot is {slot.status}; only an open or claimed slot can be assigned.",
            status=slot.status,
        )
    if not (slot.status == CLAIMED and slot.holder == actor_id) and not is_delegate(
        slot, actor_keys
    ):
        raise refusals.NotDelegate(
            "Only the slot's holder or one of its delegates "
            f"({slot.delegates if slot.delegates.keys else 'none declared'}) may assign it.",
            delegates=str(slot.delegates),
        )


def available(
    slot: SlotView, actor_id: str, keys: frozenset[str], now: datetime
) -> tuple[str, ...]:
    """The slot verbs (claim, release, assign, complete) the actor may use on the slot as
    read: each is the verb's own decision tried on it, so this never disagrees with a call
    made on the same version (a payload is still checked when completing)."""
    tries = (
        ("claim", lambda: claim(slot, actor_id, keys, now, None)),
        ("release", lambda: release(slot, actor_id, keys, now)),
        ("assign", lambda: check_may_assign(slot, actor_id, keys)),
        ("complete", lambda: check_may_complete(slot, actor_id, keys, None, None)),
    )
    found = []
    for verb, attempt in tries:
        try:
            attempt()
        except refusals.Refusal:
            continue
        found.append(verb)
    return tuple(found)


def check_may_complete(
    slot: SlotView, actor_id: str, keys: frozenset[str], event: str | None, expected: int | None
) -> None:
    """Refuse a completion the actor may not make (payload is checked by the engine)."""
    check_version(slot, expected)
    if event is not None and event != slot.waits_for:
        raise refusals.WrongEvent(
            f"This slot waits for the event {slot.waits_for!r}, not {event!r}.",
            waits_for=slot.waits_for,
        )
    if not allows(slot.status, SlotMove.COMPLETE):
        raise refusals.SlotNotOpen(
            f"The slot is {slot.status}, not open: it can no longer be completed.",
            status=slot.status,
        )
    if slot.status == CLAIMED:
        if slot.holder != actor_id:
            raise refusals.NotHolder(
                f"The slot is claimed by {slot.holder!r}; only the holder may complete it.",
                holder=slot.holder,
            )
        return
    if not is_candidate(slot, keys):
        raise refusals.NotCandidate(
            f"You are not a candidate for this slot (it is for {slot.audience}).",
            audience=str(slot.audience),
        )
