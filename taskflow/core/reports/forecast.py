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

from bisect import bisect_left, bisect_right
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


#: A cohort: an hour band (None: any) and busy or quiet (None: either).
Group = tuple[str | None, bool | None]


@dataclass(frozen=True)
class Pool:
    """The peers of one slot name (ended ones), each with the queue it opened behind."""

    peers: list[Peer]
    depths: dict[int, int]
    #: The median of those queues: above it a queue is busy.
    typical: float
    #: Each peer's hour band of opening, by ``id``.
    bands: dict[int, str]
    #: The live slots of the name (their ``id``) and when they opened, sorted.
    live: frozenset[int]
    live_opened: list[datetime]
    #: Per cohort (hour band or None, busy or None): the peers' shares of their budget at
    #: their end, sorted, and how many breached from each position on.
    groups: dict[Group, tuple[list[float], list[int]]]

    def survivors(self, group: Group, share: float) -> tuple[int, int]:
        """How many peers of ``group`` were still open at ``share``, and how many breached."""
        shares, breached_from = self.groups.get(group, ([], [0]))
        first = bisect_right(shares, share)
        return len(shares) - first, breached_from[first]


def pool_of(key: tuple[str, str, str], history: Sequence[Peer], live: Sequence[Peer]) -> Pool:
    """The ended peers of ``key`` and their queues at opening, counted with two sorted lists
    (opened before, minus ended by then: n log n, not a count per pair)."""
    peers = [p for p in history if p.key == key and p.ended_at is not None]
    everyone = [*peers, *(p for p in live if p.key == key)]
    opened = sorted(p.opened_at for p in everyone)
    ended = sorted(p.ended_at for p in everyone if p.ended_at is not None)
    depths = {
        id(p): max(bisect_left(opened, p.opened_at) - bisect_right(ended, p.opened_at), 0)
        for p in peers
    }
    mine = [p for p in live if p.key == key]
    typical = _median(list(depths.values()))
    bands = {id(p): hour_band(p.opened_at) for p in peers}
    members: dict[Group, list[tuple[float, bool]]] = {}
    for p in peers:
        assert p.ended_at is not None
        end = (p.share_at(p.ended_at), p.breached)
        busy = depths[id(p)] > typical
        mine_groups: tuple[Group, ...] = (
            (bands[id(p)], busy),
            (None, busy),
            (bands[id(p)], None),
            (None, None),
        )
        for group in mine_groups:
            members.setdefault(group, []).append(end)
    groups: dict[Group, tuple[list[float], list[int]]] = {}
    for group, ends in members.items():
        ends.sort()
        breached_from = [0] * (len(ends) + 1)
        for i in range(len(ends) - 1, -1, -1):
            breached_from[i] = breached_from[i + 1] + ends[i][1]
        groups[group] = ([e[0] for e in ends], breached_from)
    return Pool(
        peers,
        depths,
        typical,
        bands,
        frozenset(id(p) for p in mine),
        sorted(p.opened_at for p in mine),
        groups,
    )


def forecast_many(
    slots: Sequence[Peer],
    history: Sequence[Peer],
    live: Sequence[Peer],
    now: datetime,
    min_history: int = DEFAULT_MIN_HISTORY,
    min_samples: int = DEFAULT_MIN_SAMPLES,
) -> list[BreachRisk]:
    """:func:`forecast` of each of ``slots``, the pool of each slot name built once."""
    pools: dict[tuple[str, str, str], Pool] = {}
    out = []
    for slot in slots:
        if slot.key not in pools:
            pools[slot.key] = pool_of(slot.key, history, live)
        out.append(forecast(slot, history, live, now, min_history, min_samples, pools[slot.key]))
    return out


def forecast(
    slot: Peer,
    history: Sequence[Peer],
    live: Sequence[Peer],
    now: datetime,
    min_history: int = DEFAULT_MIN_HISTORY,
    min_samples: int = DEFAULT_MIN_SAMPLES,
    pool: Pool | None = None,
) -> BreachRisk:
    """The chance ``slot`` (live at ``now``) breaches, from ``history`` (peers that ended
    before ``now``) and ``live`` (the slots open now, for the load); ``pool``: the slot
    name's, already built."""
    pool = pool or pool_of(slot.key, history, live)
    peers, typical = pool.peers, pool.typical
    share = max(slot.share_at(now), 0.0)
    band = hour_band(slot.opened_at)
    # The others open now: every live slot of the name opened before now, but this one.
    queue = bisect_left(pool.live_opened, now) - (
        1 if id(slot) in pool.live and slot.opened_at < now else 0
    )
    load = "busy" if queue > typical else "quiet"

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
    busy = load == "busy"
    cohorts = (
        (f"opened {band}, {load} queue", (band, busy)),
        (f"{load} queue", (None, busy)),
        (f"opened {band}", (band, None)),
        ("all", (None, None)),
    )
    counted = [(n, pool.survivors(group, share)) for n, group in cohorts]
    name, (survivors, breached) = next(
        ((n, c) for n, c in counted if c[0] >= min_samples), counted[-1]
    )
    probability = breached / survivors if survivors else 0.0
    reason = (
        f"{breached} of {survivors} past slots ({name}) still open at "
        f"{_percent(share)} of their budget breached"
        if survivors
        else f"none of {len(peers)} past slots was still open at {_percent(share)} of its budget"
    )
    return BreachRisk(
        probability=probability,
        reason=reason,
        cohort=name,
        survivors=survivors,
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
