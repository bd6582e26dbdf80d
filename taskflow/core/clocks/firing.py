"""What a reminder or timeout does when it fires, decided purely.

The worker loads the run and slot, asks :func:`effects` what the declared
actions change (the slot's candidates, holder or priority; whom to notify and
with what message; where the run moves), and carries that out in the firing's
transaction. Recipients are audiences here; the shell finds the principals.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from taskflow.core.access import working_hours as wh
from taskflow.core.definition import audience as au
from taskflow.core.definition import sla
from taskflow.core.definition.conditions import expr as ex
from taskflow.core.definition.model import Slot
from taskflow.core.runs import opening, statuses
from taskflow.core.runs.model import AuditEntry, RunView, SlotView
from taskflow.core.slots import holding


@dataclass(frozen=True)
class Notice:
    """Notify everyone ``audience`` admits with ``message``.

    ``names`` maps the outsiders' addresses to their names (``who.email(...,
    name=...)``); ``with_link`` asks the sender to mint each outsider a magic link.
    """

    audience: au.Audience
    message: str
    who: str
    names: Mapping[str, str] = field(default_factory=dict)
    with_link: bool = False


@dataclass
class Effects:
    """What firing changes: the slot as it becomes, timeline lines, notices, a move."""

    slot: SlotView | None
    audit: list[AuditEntry] = field(default_factory=list)
    notices: list[Notice] = field(default_factory=list)
    move_to: str | None = None


def _single_user(audience: au.Audience) -> str | None:
    """The one principal an audience names outright (``who.id("x")``), if that is all it is."""
    if len(audience.keys) == 1 and not audience.residual:
        (key,) = audience.keys
        if key.startswith("user:"):
            return key.removeprefix("user:")
    return None


def reassign_targets(
    run: RunView, slot: SlotView | None, decl: Slot | None, actions: Sequence[sla.Action]
) -> frozenset[str]:
    """The people ``actions`` would hand the slot to by name (whose leave the shell reads)."""
    if slot is None or decl is None:
        return frozenset()
    item = opening.item_of(slot)
    found = (
        _single_user(
            au.compile(a.who, run.subject, item, holder=slot.holder, candidates=decl.candidates)
        )
        for a in actions
        if a.kind == "reassign" and a.who is not None
    )
    return frozenset(p for p in found if p is not None)


def effects(
    run: RunView,
    slot: SlotView | None,
    decl: Slot | None,
    actions: Sequence[sla.Action],
    *,
    message: str,
    now: datetime,
    away: Mapping[str, wh.Leave] | None = None,
) -> Effects:
    """Apply ``actions`` (of a reminder on ``slot``, or a state timeout when ``slot`` is None).

    ``away`` holds the leave, at ``now``, of the people a ``reassign`` names outright
    (:func:`reassign_targets`): the slot is not handed to someone who is away.
    """
    out = Effects(slot)
    item = opening.item_of(slot) if slot is not None else ex.MISSING
    holder = slot.holder if slot is not None else None
    candidates = decl.candidates if decl is not None else None
    slot_id = slot.id if slot is not None else None

    def compiled(who: au.Who) -> au.Audience:
        return au.compile(who, run.subject, item, holder=holder, candidates=candidates)

    def line(kind: str, **details: object) -> None:
        out.audit.append(AuditEntry(kind, now, None, slot_id, message, dict(details)))

    for action in actions:
        if action.kind == "notify" and action.who is not None:
            out.notices.append(
                Notice(
                    compiled(action.who),
                    message,
                    str(action.who),
                    names=au.email_names(action.who, run.subject, item, candidates=candidates),
                    with_link=action.with_link and slot is not None,
                )
            )
        elif action.kind == "move" and action.target is not None:
            out.move_to = action.target
        elif out.slot is None or decl is None:
            continue  # slot actions on a state timeout have no slot to act on
        elif action.kind == "escalate" and action.who is not None:
            # Widened whole: the declared rule's exclusions cover what the escalation adds.
            widened = compiled(au.widen(decl.candidates, action.who))
            out.slot = dataclasses.replace(out.slot, audience=widened)
            line("slot.escalated", slot=out.slot.name, added=str(action.who))
        elif action.kind == "reassign" and action.who is not None:
            # The declared rule's exclusions hold for the new pool too, and a person it
            # excludes by id (the submitter) is not handed the slot: nothing changes.
            kept = compiled(au.keeping_exclusions(action.who, decl.candidates))
            person = _single_user(compiled(action.who))
            target = kept
            if person is not None and not kept.admits(frozenset({au.ANY_KEY, f"user:{person}"})):
                line("slot.reassign_skipped", slot=out.slot.name, to=person, excluded=True)
                continue
            absent = (away or {}).get(person) if person is not None else None
            if absent is not None:
                # Handing work to someone on leave parks it unseen: the slot stays where it
                # is (its breach and later reminders still fire) and the line says why.
                out.audit.append(
                    AuditEntry(
                        "slot.reassign_skipped",
                        now,
                        None,
                        slot_id,
                        f"{message}: {person} is on leave until {absent.end.isoformat()}",
                        {
                            "slot": out.slot.name,
                            "to": person,
                            "on_leave": True,
                            "leave_from": absent.start.isoformat(),
                            "leave_to": absent.end.isoformat(),
                        },
                    )
                )
                continue
            if person is not None:
                out.slot = dataclasses.replace(
                    out.slot,
                    status=statuses.after(out.slot.status, statuses.SlotMove.REASSIGN_TO_PERSON),
                    holder=person,
                    claimed_at=now,
                )
            else:  # a role or group: back in the pool, for them
                out.slot = dataclasses.replace(
                    out.slot,
                    status=statuses.after(out.slot.status, statuses.SlotMove.REASSIGN_TO_POOL),
                    holder=None,
                    claimed_at=None,
                    audience=target,
                )
            # A move for held time: held by the person from now, or back in a pool (its
            # line says which, so the timeline reads as the slot's held facts count).
            held = person is not None
            out.slot = holding.reassigned(out.slot, now, held=held)
            line(holding.REASSIGNED, slot=out.slot.name, to=person or str(target), held=held)
        elif (
            action.kind == "raise_priority"
            and action.priority is not None
            and action.priority < out.slot.priority
        ):
            out.slot = dataclasses.replace(out.slot, priority=action.priority)
            line("slot.priority_raised", slot=out.slot.name, priority=action.priority)
    if out.slot is not None and slot is not None and out.slot != slot:
        out.slot = dataclasses.replace(out.slot, version=slot.version + 1)
    return out
