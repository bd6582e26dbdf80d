"""Adding a candidate to one live slot (``addCandidate``, an automation's ``add_candidate``),
decided purely.

The slot's compiled audience (``core/definition/audience.py``: any of ``keys``, and every
``residual`` rule) is widened by one key: the new rule is "the slot's rule as it stands, or
the added key", and every exclusion of the slot's rule (a ``not`` residual: the submitter
kept out of their own approval) still holds over the whole. So adding a candidate never
lets in someone the rule keeps out, as an escalation never does (``who.widen``).
"""

from __future__ import annotations

import dataclasses
from datetime import datetime

from taskflow.core.definition import audience as au
from taskflow.core.runs import refusals
from taskflow.core.runs.model import SlotView
from taskflow.core.slots.slots import check_version

#: The kinds of key a candidate is added as (``addCandidate``'s ``principal`` and ``role``).
KINDS = ("user", "role")


def widened(audience: au.Audience, key: str) -> au.Audience:
    """``audience`` that also admits whoever carries ``key``, its exclusions kept."""
    keys = au.Rule("any", args=tuple(au.Rule("key", key=k) for k in sorted(audience.keys)))
    positive = tuple(r for r in audience.residual if r.op != "not")
    excluded = tuple(r for r in audience.residual if r.op == "not")
    standing = au.Rule("all", args=(keys, *positive))
    either = au.Rule("any", args=(standing, au.Rule("key", key=key)))
    return au.compile_rule(au.Rule("all", args=(either, *excluded)))


def add_candidate(
    slot: SlotView,
    key: str,
    added_keys: frozenset[str] | None,
    now: datetime,
    expected: int | None,
) -> SlotView:
    """The slot admitting ``key`` too, one version on. ``added_keys``: the keys the added
    principal carries (None for a role), to refuse one already admitted or one the slot's
    rule keeps out. Refused on a stale copy, a slot no longer live, or nothing to add."""
    check_version(slot, expected)
    if not slot.live:
        raise refusals.SlotNotOpen(
            f"The slot is {slot.status}: it takes no new candidates.", status=slot.status
        )
    who = key.split(":", 1)[1]
    already = (
        slot.audience.admits(added_keys)
        if added_keys is not None
        else key in slot.audience.keys or au.ANY_KEY in slot.audience.keys
    )
    if already:
        raise refusals.AlreadyCandidate(
            f"{who!r} is already among the slot's candidates ({slot.audience}).",
            audience=str(slot.audience),
        )
    audience = widened(slot.audience, key)
    if added_keys is not None and not audience.admits(added_keys):
        raise refusals.NotCandidate(
            f"{who!r} is kept out by the slot's own rule ({slot.audience}); "
            "adding them would not let them take it.",
            audience=str(slot.audience),
        )
    return dataclasses.replace(slot, audience=audience, version=slot.version + 1)
