"""The breach forecast: how likely a live slot is to breach its milestone (docs/forecast.md).

An explained, empirical model, no fitting: the forecast of a live slot is the share of
its *peers* that breached, among the peers still open at the same share of their budget.
Peers are ended slots of the same workflow, state and slot name that had a clock. Both
the live slot and each peer are read as a share of their own budget (opened to due), so
a budget changed between versions still compares.

The peers are narrowed, most specific first, to those that look like this slot:

- the same *hour band* of opening (night 0-6, morning 6-12, afternoon 12-18, evening
  18-24, UTC, weekday or weekend): a slot opened on a Friday evening waits for Monday;
- the same *load*: the queue of the same slot name open when it opened (the candidate
  pool's load), busy above the peers' median, quiet otherwise.

The first cohort with at least ``min_samples`` survivors answers; its name, its size and
the breached count are the reason. Fewer than ``min_history`` peers in all: "not enough
history" (no probability). Pure: ``now`` is given; the caller loads the peers.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

#: A forecast at or above this probability is at risk (``clock.forecast_at_risk``, backtest).
DEFAULT_THRESHOLD = 0.5
#: Fewer peers than this in all: not enough history.
DEFAULT_MIN_HISTORY = 20
#: A cohort answers with at least this many survivors.
DEFAULT_MIN_SAMPLES = 10
#: The backtest forecasts each past slot at this share of its budget (before the 75 % mark).
DEFAULT_CHECKPOINT = 0.5

_BANDS = ("night", "morning", "afternoon", "evening")


@dataclass(frozen=True)
class Peer:
    """An ended slot of the history (or a live one, for the forecast and the pool's load)."""

    key: tuple[str, str, str]  # workflow, state, slot name
    opened_at: datetime
    due_at: datetime
    #: When it ended (satisfied or cancelled); None: still live.
    ended_at: datetime | None
    breached: bool

    @property
    def budget(self) -> timedelta:
        return max(self.due_at - self.opened_at, timedelta(microseconds=1))

    def share_at(self, at: datetime) -> float:
        """How much of its budget had passed at ``at``."""
        return (at - self.opened_at) / self.budget

    def open_at_share(self, share: float) -> bool:
        """Whether it was still open when ``share`` of its budget had passed."""
        return self.ended_at is None or self.share_at(self.ended_at) > share


@dataclass(frozen=True)
class BreachRisk:
    """A forecast and why: the cohort it was read from and its counts."""

    #: None: not enough history.
    probability: float | None
    reason: str
    cohort: str
    survivors: int
    breached: int
    history: int
    share_elapsed: float
    hour_band: str
    load: str
    queue: int


def hour_band(at: datetime) -> str:
    """The band of the day an instant falls in (UTC), and weekday or weekend."""
    day = "weekend" if at.weekday() >= 5 else "weekday"
    return f"{day} {_BANDS[at.hour // 6]}"


def queue_at(at: datetime, others: Iterable[Peer]) -> int:
    """How many slots of the same name were open at ``at`` (the load the pool saw)."""
    return sum(1 for o in others if o.opened_at < at and (o.ended_at is None or o.ended_at > at))


def _median(values: Sequence[int]) -> float:
    ordered = sorted(values)
    if not ordered:
        return 0.0
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2


def _percent(value: float) -> str:
    return f"{value * 100:.0f} %"


def forecast(
    slot: Peer,
    history: Sequence[Peer],
    live: Sequence[Peer],
    now: datetime,
    min_history: int = DEFAULT_MIN_HISTORY,
    min_samples: int = DEFAULT_MIN_SAMPLES,
) -> BreachRisk:
    """The chance ``slot`` (live at ``now``) breaches, from ``history`` (peers that ended
    before ``now``) and ``live`` (the slots open now, for the load)."""
    peers = [p for p in history if p.key == slot.key and p.ended_at is not None]
    share = max(slot.share_at(now), 0.0)
    band = hour_band(slot.opened_at)
    same_name = [p for p in (*peers, *live) if p.key == slot.key and p is not slot]
    queue = queue_at(now, (p for p in live if p.key == slot.key and p is not slot))
    depths = {id(p): queue_at(p.opened_at, (o for o in same_name if o is not p)) for p in peers}
    typical = _median(list(depths.values()))
    load = "busy" if queue > typical else "quiet"

    def is_load(p: Peer) -> bool:
        return (depths[id(p)] > typical) == (load == "busy")

    def is_band(p: Peer) -> bool:
        return hour_band(p.opened_at) == band

    base = dict(share_elapsed=share, hour_band=band, load=load, queue=queue, history=len(peers))
    if len(peers) < min_history:
        return BreachRisk(
            probability=None,
            reason=f"not enough history: {len(peers)} past slots of {slot.key[2]!r} in "
            f"{slot.key[1]!r}, {min_history} needed",
            cohort="none",
            survivors=0,
            breached=0,
            **base,  # type: ignore[arg-type]
        )
    if now >= slot.due_at:
        return BreachRisk(
            probability=1.0,
            reason=f"past its due instant ({_percent(share)} of its budget): breached",
            cohort="breached",
            survivors=0,
            breached=0,
            **base,  # type: ignore[arg-type]
        )
    survivors = [p for p in peers if p.open_at_share(share)]
    cohorts = (
        (f"opened {band}, {load} queue", [p for p in survivors if is_band(p) and is_load(p)]),
        (f"{load} queue", [p for p in survivors if is_load(p)]),
        (f"opened {band}", [p for p in survivors if is_band(p)]),
        ("all", survivors),
    )
    name, chosen = next(((n, c) for n, c in cohorts if len(c) >= min_samples), cohorts[-1])
    breached = sum(1 for p in chosen if p.breached)
    probability = breached / len(chosen) if chosen else 0.0
    reason = (
        f"{breached} of {len(chosen)} past slots ({name}) still open at "
        f"{_percent(share)} of their budget breached"
        if chosen
        else f"none of {len(peers)} past slots was still open at {_percent(share)} of its budget"
    )
    return BreachRisk(
        probability=probability,
        reason=reason,
        cohort=name,
        survivors=len(chosen),
        breached=breached,
        **base,  # type: ignore[arg-type]
    )


@dataclass(frozen=True)
class Backtest:
    """How the forecast did over past slots, each forecast at the checkpoint."""

    since: datetime
    until: datetime
    forecast: int
    no_history: int
    true_positive: int
    false_positive: int
    false_negative: int
    true_negative: int

    @property
    def precision(self) -> float | None:
        flagged = self.true_positive + self.false_positive
        return self.true_positive / flagged if flagged else None

    @property
    def recall(self) -> float | None:
        actual = self.true_positive + self.false_negative
        return self.true_positive / actual if actual else None


def backtest(
    history: Sequence[Peer],
    now: datetime,
    weeks: int,
    threshold: float = DEFAULT_THRESHOLD,
    checkpoint: float = DEFAULT_CHECKPOINT,
    min_history: int = DEFAULT_MIN_HISTORY,
    min_samples: int = DEFAULT_MIN_SAMPLES,
) -> Backtest:
    """Replay the slots opened in the last ``weeks`` before ``now`` that ended: each still
    open at ``checkpoint`` of its budget is forecast then, from only what had ended by
    that instant, and the forecast (at risk: >= ``threshold``) is scored against whether it
    breached. Slots that ended before the checkpoint were never forecast (and never late)."""
    since = now - timedelta(weeks=weeks)
    counts = {"tp": 0, "fp": 0, "fn": 0, "tn": 0, "none": 0, "n": 0}
    by_key: dict[tuple[str, str, str], list[Peer]] = {}
    for p in history:
        by_key.setdefault(p.key, []).append(p)
    for peers in by_key.values():
        for slot in peers:
            if slot.ended_at is None or not since <= slot.opened_at < now:
                continue
            at = slot.opened_at + slot.budget * checkpoint
            if at >= now or not slot.open_at_share(checkpoint):
                continue
            known = [p for p in peers if p.ended_at is not None and p.ended_at <= at]
            live = [
                Peer(p.key, p.opened_at, p.due_at, None, False)
                for p in peers
                if p.opened_at <= at and (p.ended_at is None or p.ended_at > at)
            ]
            me = next(p for p in live if p.opened_at == slot.opened_at and p.due_at == slot.due_at)
            risk = forecast(me, known, live, at, min_history, min_samples)
            counts["n"] += 1
            if risk.probability is None:
                counts["none"] += 1
                continue
            flagged = risk.probability >= threshold
            cell = (
                ("tp" if slot.breached else "fp") if flagged else ("fn" if slot.breached else "tn")
            )
            counts[cell] += 1
    return Backtest(
        since=since,
        until=now,
        forecast=counts["n"],
        no_history=counts["none"],
        true_positive=counts["tp"],
        false_positive=counts["fp"],
        false_negative=counts["fn"],
        true_negative=counts["tn"],
    )
