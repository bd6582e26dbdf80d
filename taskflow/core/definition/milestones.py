"""Milestones: the budgets a slot's clocks run on, and what a budget change mid-run does.

``milestone.finished(within=business.days(2), recompute="restart")``; the recompute
policies (``keep-elapsed``, the default, ``restart``, ``retroactive``) are in docs/sla.md.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final, Literal, TypedDict, Unpack

from taskflow.core.definition import budgets as bu

MilestoneKind = Literal["assigned", "finished"]
MILESTONE_KINDS: Final = ("assigned", "finished")


@dataclass(frozen=True, eq=False)
class Milestone:
    """The slot must be ``assigned`` / ``finished`` within ``within``; ``calendar`` overrides;
    ``recompute``: what a budget change mid-run does (``keep-elapsed``, ``restart``,
    ``retroactive``; docs/sla.md)."""

    kind: str
    within: bu.BudgetLike
    calendar: str | None = None
    recompute: str = bu.KEEP_ELAPSED

    def to_json(self) -> Any:
        """``{"kind", "within", "calendar"}`` (and ``recompute`` when not the default)."""
        doc = {"kind": self.kind, "within": self.within.to_json(), "calendar": self.calendar}
        if self.recompute != bu.KEEP_ELAPSED:  # only then: older digests stay as they were
            doc["recompute"] = self.recompute
        return doc


class MilestoneOptions(TypedDict, total=False):
    """What both milestones take besides ``within``: a calendar and a recompute policy."""

    calendar: str | None
    recompute: str


class _MilestoneFactory:
    """The ``milestone`` namespace of the DSL (``calendar=``, ``recompute=`` by keyword)."""

    def assigned(self, *, within: bu.BudgetLike, **options: Unpack[MilestoneOptions]) -> Milestone:
        """Someone must pick the slot up (claim it) within this budget."""
        return Milestone("assigned", within, **options)

    def finished(self, *, within: bu.BudgetLike, **options: Unpack[MilestoneOptions]) -> Milestone:
        """The slot must be satisfied within this budget."""
        return Milestone("finished", within, **options)


milestone: Final = _MilestoneFactory()
