"""Milestones: the budgets a slot's clocks run on, and what a budget change mid-run does.

``milestone.finished(within=business.days(2), recompute="restart")``; the recompute
policies (``keep-elapsed``, the default, ``restart``, ``retroactive``) are in docs/sla.md.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Literal, TypedDict, Unpack

from taskflow.core.definition import budgets as bu
from taskflow.core.definition.checks import problems

MilestoneKind = Literal["assigned", "finished"]
MILESTONE_KINDS: Final = ("assigned", "finished")
#: The links a calendar chain may name (``core/clocks/chain.py`` holds the rule).
CHAIN_LINKS: Final = ("holder", "team", "region", "milestone", "workflow")
#: What a holder's leave does to the clock (docs/sla.md, "A holder's leave"): it runs on
#: (the default; an escalation may reassign), or it stands still through the leave.
HOLDER_LEAVE: Final = ("run", "pause")


@dataclass(frozen=True, eq=False)
class Milestone:
    """The slot must be ``assigned`` / ``finished`` within ``within``; ``calendar`` overrides;
    ``recompute``: what a budget change mid-run does (``keep-elapsed``, ``restart``,
    ``retroactive``; docs/sla.md)."""

    kind: str
    within: bu.BudgetLike
    calendar: str | None = None
    recompute: str = bu.KEEP_ELAPSED
    #: The calendar chain, tried in order (empty: the milestone's calendar, else the
    #: workflow's); docs/calendars.md, "The calendar chain".
    chain: tuple[str, ...] = ()
    #: The ``region`` link's table: ``"DE"`` or ``"DE-BE"`` (``subject.country``, with
    #: ``subject.region`` as the subdivision) -> a calendar name.
    regions: Mapping[str, str] = field(default_factory=dict)
    #: The breach forecast at which the forecast watch says ``clock.forecast_at_risk`` for
    #: a slot on this milestone (None: ``TASKFLOW_FORECAST_ALERT``); docs/forecast.md.
    forecast_alert: float | None = None
    #: ``pause``: the clock stands still while its holder is on leave (``addLeave``),
    #: running again when the leave ends; ``run`` (the default): it runs on.
    holder_leave: str = "run"
    #: Where the ``region`` link reads the region code ``regions`` maps: "" (the subject's
    #: ``country`` and ``region``), ``subject.<path>`` (a subject field naming a code such
    #: as ``"DE-BY"``) or ``holder.<attribute>`` (the holder's attribute).
    region_from: str = ""

    def __post_init__(self) -> None:
        _check_alert(self.forecast_alert, self.kind)
        object.__setattr__(self, "chain", tuple(self.chain))  # a list reads as well
        object.__setattr__(self, "regions", {k.upper(): v for k, v in self.regions.items()})
        unknown = [link for link in self.chain if link not in CHAIN_LINKS]
        if unknown or len(set(self.chain)) != len(self.chain):
            raise problems.BadCalendarChain(
                f"chain {list(self.chain)} names "
                f"{'unknown links ' + str(unknown) if unknown else 'a link twice'}",
                fix=f"use each of {', '.join(CHAIN_LINKS)} at most once, in the order to try",
                where=f"milestone {self.kind}",
            )

    def to_json(self) -> Any:
        """``{"kind", "within", "calendar"}`` (and ``recompute`` when not the default)."""
        doc = {"kind": self.kind, "within": self.within.to_json(), "calendar": self.calendar}
        if self.recompute != bu.KEEP_ELAPSED:  # only then: older digests stay as they were
            doc["recompute"] = self.recompute
        if self.chain:  # likewise
            doc["chain"] = list(self.chain)
        if self.regions:
            doc["regions"] = dict(sorted(self.regions.items()))
        if self.forecast_alert is not None:
            doc["forecast_alert"] = self.forecast_alert
        if self.holder_leave != "run":
            doc["holder_leave"] = self.holder_leave
        if self.region_from:
            doc["region_from"] = self.region_from
        return doc


def _check_alert(alert: object, kind: str) -> None:
    """A forecast alert is a probability strictly between 0 and 1: at 0 every slot alerts,
    at 1 only a slot already due, which ``clock.breached`` says anyway."""
    if alert is None:
        return
    if isinstance(alert, int | float) and not isinstance(alert, bool) and 0 < alert < 1:
        return
    raise problems.BadForecastAlert(
        f"forecast_alert={alert!r} is not a probability strictly between 0 and 1",
        fix="give the breach forecast at which to alert, e.g. forecast_alert=0.5, or leave "
        "it out for TASKFLOW_FORECAST_ALERT",
        where=f"milestone {kind}",
    )


class MilestoneOptions(TypedDict, total=False):
    """What both milestones take besides ``within``: a calendar, a recompute policy, a
    calendar chain and the forecast alert."""

    calendar: str | None
    recompute: str
    chain: tuple[str, ...]
    regions: Mapping[str, str]
    forecast_alert: float | None
    holder_leave: str
    region_from: str


class _MilestoneFactory:
    """The ``milestone`` namespace of the DSL (``calendar=``, ``recompute=`` by keyword)."""

    def assigned(self, *, within: bu.BudgetLike, **options: Unpack[MilestoneOptions]) -> Milestone:
        """Someone must pick the slot up (claim it) within this budget."""
        return Milestone("assigned", within, **options)

    def finished(self, *, within: bu.BudgetLike, **options: Unpack[MilestoneOptions]) -> Milestone:
        """The slot must be satisfied within this budget."""
        return Milestone("finished", within, **options)


milestone: Final = _MilestoneFactory()
