"""Filters over slots, shared by the inbox, work lists and claim-next."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from taskflow.core.access import access


@dataclass(frozen=True)
class SlotFilter:
    """Filters shared by inbox, work and claim-next."""

    workflow: str | None = None
    state: str | None = None
    name: str | None = None
    priority_at_most: int | None = None
    due_before: datetime | None = None
    holder: str | None = None
    #: Audience keys a slot must carry one of (a team queue: ``role:finance``).
    audience: Sequence[str] | None = None
    status: Sequence[str] | None = None
    #: Where the caller's powers reach (``core.access``); None: everywhere.
    scope: access.Scope = None
    #: Only slots of these runs (ids): a live subscription re-reads what a change touched.
    runs: Sequence[str] | None = None
