"""The forecast watch: which live slots a pass re-forecasts, when a forecast raises the
``clock.forecast_at_risk`` line, and that line (pure; docs/forecast.md, "The at-risk event").

A slot is *flagged* once its forecast reached the threshold; the line is written as the flag
goes up, and only then: a flagged slot says nothing more until its forecast falls below the
threshold (the flag goes down, quietly) and reaches it again. The watch stops at the clock's
own at-risk share (75 % by default): from there ``clock.at_risk`` speaks for the clock.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime

from taskflow.core.definition.workflow import Definition
from taskflow.core.reports.forecast import BreachRisk, Peer
from taskflow.core.runs.model import AuditEntry

#: The timeline kind (and the event and trigger name) of a forecast reaching its threshold.
KIND = "clock.forecast_at_risk"
#: The forecast a slot must reach to raise the line, by default (``TASKFLOW_FORECAST_ALERT``).
DEFAULT_ALERT = 0.7


@dataclass(frozen=True)
class Watched:
    """A live slot's flag as the last pass left it (None: never forecast yet)."""

    flagged: bool | None
    evaluated_at: datetime | None


def batch(
    live: Mapping[str, Peer],
    watched: Mapping[str, Watched],
    now: datetime,
    *,
    stop_share: float,
    size: int,
) -> list[str]:
    """The ids of at most ``size`` live slots to forecast now: those still short of
    ``stop_share`` of their budget, the least recently forecast first (never forecast
    before all), then the nearest due."""
    never = datetime.min.replace(tzinfo=UTC)
    open_ = [i for i, p in live.items() if now < p.due_at and p.share_at(now) < stop_share]
    open_.sort(key=lambda i: (_last(watched.get(i)) or never, live[i].due_at, i))
    return open_[:size]


def _last(w: Watched | None) -> datetime | None:
    return w.evaluated_at if w is not None else None


def threshold(
    definition: Definition | None, state: str, slot: str, milestone: str | None, default: float
) -> float:
    """The alert threshold of a slot: its clock's milestone's ``forecast_alert`` where the
    run's definition declares one, else ``default`` (``TASKFLOW_FORECAST_ALERT``; also for a
    version the code no longer loads, or a slot it no longer declares)."""
    if definition is None or milestone is None:
        return default
    try:
        declared = definition.slot(state, slot).milestone(milestone)
    except KeyError:  # the state or slot left the definition
        return default
    if declared is None or declared.forecast_alert is None:
        return default
    return declared.forecast_alert


def flag(risk: BreachRisk, flagged: bool | None, threshold: float) -> bool | None:
    """The slot's flag after ``risk``: up at ``threshold`` or more, down below it; unchanged
    (``flagged``) when the forecast has no probability (not enough history)."""
    if risk.probability is None:
        return flagged
    return risk.probability >= threshold


def rises(before: bool | None, after: bool | None) -> bool:
    """Whether the flag went up (the line is written): from down or never set, to up."""
    return bool(after) and not before


def line(
    slot_id: str, slot_name: str, peer: Peer, risk: BreachRisk, threshold: float, now: datetime
) -> AuditEntry:
    """The ``clock.forecast_at_risk`` line of a slot whose forecast reached ``threshold``:
    the reason is the forecast's own; details the figures behind it and the due instant."""
    probability = risk.probability if risk.probability is not None else 0.0
    return AuditEntry(
        KIND,
        now,
        None,
        slot_id,
        f"breach forecast {probability * 100:.0f} % reached {threshold * 100:.0f} %: {risk.reason}",
        {
            "slot": slot_name,
            "due_at": peer.due_at.astimezone(UTC).isoformat(),
            "probability": round(probability, 4),
            "threshold": threshold,
            "cohort": risk.cohort,
            "samples": risk.survivors,
            "breached_samples": risk.breached,
            "share_elapsed": round(risk.share_elapsed, 4),
        },
    )
