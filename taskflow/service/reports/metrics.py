"""Prometheus metrics (``GET /metrics``, docs/operations.md): what is kept where.

- **Counted by the process that does the work** (prometheus-client counters and
  histograms): timer firings and their lag (the worker), claims and completions
  (the use cases), typed refusals by code and GraphQL request latency (the API),
  and the connections of this process's pools.
- **Read at scrape time** with one index probe or range each
  (``store/reports/metrics_sql.py``): armed timers due and overdue, dead timers, the
  oldest open slot, child runs in flight (``store/compose/children.py``).
- **Kept by the worker**: live slots by workflow, state and status, and clocks
  at risk and breached by workflow and milestone. Those read every live slot, so
  a worker computes them every :data:`SNAPSHOT_EVERY` into one row that a scrape
  reads (``taskflow_snapshot_age_seconds`` says how old it is).

Several processes: with ``PROMETHEUS_MULTIPROC_DIR`` set (``taskflow serve
--workers N`` sets it), counters and histograms are written to files in that
folder and any process's scrape adds up every process's (prometheus-client's
multiprocess mode).
"""

from __future__ import annotations

import functools
import os
import re
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

import prometheus_client
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, multiprocess
from prometheus_client.core import GaugeMetricFamily, Metric

from taskflow.service.common.container import Services
from taskflow.service.operate import attention
from taskflow.service.reports import reports
from taskflow.store.compose import children as child_rows
from taskflow.store.operate import attention as attention_sql
from taskflow.store.reports import metrics_sql

#: The environment variable that turns on prometheus-client's multiprocess mode.
MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"
#: The exposition format's content type.
CONTENT_TYPE = prometheus_client.CONTENT_TYPE_LATEST
#: How often a worker recomputes the snapshot of live slots and clocks.
SNAPSHOT_EVERY = timedelta(seconds=15)
#: The snapshot's row in ``metric_snapshot``.
SNAPSHOT = "live"
#: A due timer still armed this long after its due instant counts as overdue.
OVERDUE_AFTER = timedelta(seconds=60)
#: Distinct GraphQL operation names kept as labels per process; later ones read "other".
MAX_OPERATIONS = 200

# ``*_created`` series double every counter and mean nothing to an alert.
prometheus_client.disable_created_metrics()  # type: ignore[no-untyped-call]

#: The metrics this process keeps (in multiprocess mode they also write their files).
REGISTRY = CollectorRegistry(auto_describe=True)

FIRINGS = Counter(
    "taskflow_timer_firings",
    "Timer firings by kind (breach, reminder, timeout) and outcome (fired, failed, dead).",
    ["kind", "outcome"],
    registry=REGISTRY,
)
FIRING_LAG = Histogram(
    "taskflow_timer_firing_lag_seconds",
    "Seconds from a timer's due instant to its firing, by kind.",
    ["kind"],
    buckets=(0.1, 0.5, 1, 2, 5, 10, 30, 60, 300, 900, 3600),
    registry=REGISTRY,
)
MAILS = Counter(
    "taskflow_mails",
    "Notifications the worker mailed, by outcome (sent; failed: tried again; dead).",
    ["outcome"],
    registry=REGISTRY,
)
CLAIMS = Counter(
    "taskflow_claims",
    "Slots claimed, by how (claim, claim_next).",
    ["how"],
    registry=REGISTRY,
)
COMPLETIONS = Counter(
    "taskflow_completions",
    "Slots completed (their event deposited), by whom (staff, link).",
    ["via"],
    registry=REGISTRY,
)
REFUSALS = Counter(
    "taskflow_refusals",
    "Typed refusals answered by mutations, by code.",
    ["code"],
    registry=REGISTRY,
)
PRUNED = Counter(
    "taskflow_pruned_runs",
    "Ended runs pruned by retention, by workflow.",
    ["workflow"],
    registry=REGISTRY,
)
GRAPHQL = Histogram(
    "taskflow_graphql_request_duration_seconds",
    "GraphQL requests by operation name and outcome (ok, refused, error, unauthenticated).",
    ["operation", "outcome"],
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10),
    registry=REGISTRY,
)
POOL = Gauge(
    "taskflow_db_pool_connections",
    "Connections of the server processes' pools, by pool (main, keys) and state "
    "(in_use, idle); summed over live processes.",
    ["pool", "state"],
    multiprocess_mode="livesum",
    registry=REGISTRY,
)

STEP_ATTEMPTS = Counter(
    "taskflow_step_attempts",
    "Attempts of automatic steps, by workflow and outcome (succeeded, retrying, failed, "
    "parked, discarded).",
    ["workflow", "outcome"],
    registry=REGISTRY,
)
STEP_DURATION = Histogram(
    "taskflow_step_duration_seconds",
    "How long automatic steps' actions ran, by workflow and outcome.",
    ["workflow", "outcome"],
    buckets=(0.005, 0.01, 0.05, 0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 300),
    registry=REGISTRY,
)

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")
_operations: set[str] = set()


def multiprocess_mode() -> bool:
    """True when counters are shared through ``PROMETHEUS_MULTIPROC_DIR``."""
    return bool(os.environ.get(MULTIPROC_ENV))


def operation_label(name: str | None) -> str:
    """A GraphQL operation name as a label: a client's name is its own, but a bounded
    number of them (``anonymous`` without one, ``other`` past :data:`MAX_OPERATIONS`)."""
    if not name:
        return "anonymous"
    if not _NAME.fullmatch(name):
        return "other"
    if name not in _operations:
        if len(_operations) >= MAX_OPERATIONS:
            return "other"
        _operations.add(name)
    return name


def firing(kind: str, outcome: str, lag: timedelta | None = None) -> None:
    """Count a timer firing (``outcome`` fired, failed or dead); observe its lag if fired."""
    FIRINGS.labels(kind, outcome).inc()
    if lag is not None:
        FIRING_LAG.labels(kind).observe(max(lag.total_seconds(), 0.0))


def step_attempts(attempts: Iterable[tuple[str, str, float]]) -> None:
    """Count automatic steps' attempts, (workflow, outcome, seconds) each (``outcome``
    succeeded, retrying, failed, parked, discarded), and observe how long their actions ran."""
    for workflow, outcome, seconds in attempts:
        _labelled(STEP_ATTEMPTS, workflow, outcome).inc()
        _labelled(STEP_DURATION, workflow, outcome).observe(max(seconds, 0.0))


def claimed(how: str) -> None:
    _labelled(CLAIMS, how).inc()


def completed(via: str) -> None:
    _labelled(COMPLETIONS, via).inc()


def refused(code: str) -> None:
    _labelled(REFUSALS, code).inc()


@functools.cache
def _labelled(metric: Any, *labels: str) -> Any:
    """``metric.labels(*labels)``, looked up once per label values: ``labels`` is not free,
    and the callers' label values are bounded (our own names, codes, operation labels)."""
    return metric.labels(*labels)


def pruned(workflow: str, runs: int) -> None:
    PRUNED.labels(workflow).inc(runs)


def graphql_request(operation: str | None, outcome: str, seconds: float) -> None:
    _labelled(GRAPHQL, operation_label(operation), outcome).observe(seconds)


#: A GraphQL request samples the pool gauges at most this often (seconds; a scrape always
#: samples its own process's): counting a pool's connections walks them all.
POOL_SAMPLE_SECONDS = 1.0
_pools_sampled = [-POOL_SAMPLE_SECONDS]


def sample_pools_now_and_then(services: Services) -> None:
    """:func:`sample_pools`, unless this process did within :data:`POOL_SAMPLE_SECONDS`
    (after every GraphQL request: the gauges of processes other than the one a scrape
    reaches are at most that old)."""
    now = time.monotonic()
    if now - _pools_sampled[0] >= POOL_SAMPLE_SECONDS:
        _pools_sampled[0] = now
        sample_pools(services)


def sample_pools(services: Services) -> None:
    """Set this process's pool gauges from its pools now."""
    database = services.db
    pools = (("main", database.pool), ("keys", database.keys))
    for name, pool in pools:
        size, idle = pool.get_size(), pool.get_idle_size()
        _labelled(POOL, name, "in_use").set(size - idle)
        _labelled(POOL, name, "idle").set(idle)


def process_exit() -> None:
    """Forget this process's live gauges (multiprocess mode), as it stops serving."""
    if multiprocess_mode():
        multiprocess.mark_process_dead(os.getpid())  # type: ignore[no-untyped-call]


async def refresh(services: Services, *, max_age: timedelta = SNAPSHOT_EVERY) -> bool:
    """Recompute the snapshot of live slots and clocks unless one younger than ``max_age``
    exists (several workers share the work); True when this call wrote it."""
    now = services.clock.now()
    await reports.cover(services, now, now)
    async with services.db.transaction() as conn:
        found = await metrics_sql.read_snapshot(conn, SNAPSHOT)
        if found is not None and timedelta(0) <= now - found[0] < max_age:
            return False
        slots = await metrics_sql.live_slots(conn)
        clocks = await metrics_sql.clocks(
            conn,
            now=now,
            day_us=reports.day_lengths(services),
            at_risk_left=reports.at_risk_left(services),
        )
        waiting = await attention_sql.counts(conn, attention.windows(services))
        body = {
            "slots": [list(s) for s in slots],
            "clocks": [list(c) for c in clocks],
            "attention": {str(reason.value): n for reason, n in waiting.items()},
        }
        await metrics_sql.write_snapshot(conn, SNAPSHOT, now, body)
    return True


@dataclass
class _Read:
    """What one scrape read from the database."""

    now: datetime
    due: int
    overdue: int
    dead: int
    oldest_open: datetime | None
    snapshot: tuple[datetime, Any] | None
    #: Child runs started or to start and not settled (``run_child``, one partial index).
    children: int = 0
    #: A saga's compensations by outcome (running, done, failed).
    compensations: dict[str, int] = field(default_factory=dict)
    families: list[Metric] = field(default_factory=list)

    def collect(self) -> Iterator[Metric]:
        def gauge(name: str, text: str, labels: Iterable[str] = ()) -> GaugeMetricFamily:
            return GaugeMetricFamily(name, text, labels=list(labels))

        timers = gauge(
            "taskflow_timers",
            "Armed timers due now (due), and of those, due for more than "
            f"{int(OVERDUE_AFTER.total_seconds())} s (overdue: the worker is behind).",
            ["state"],
        )
        timers.add_metric(["due"], self.due)
        timers.add_metric(["overdue"], self.overdue)
        yield timers
        dead = gauge("taskflow_timers_dead", "Timers parked dead, waiting for an admin.")
        dead.add_metric([], self.dead)
        yield dead
        age = 0.0 if self.oldest_open is None else (self.now - self.oldest_open).total_seconds()
        oldest = gauge("taskflow_oldest_open_slot_age_seconds", "Age of the oldest open slot.")
        oldest.add_metric([], max(age, 0.0))
        yield oldest
        children = gauge(
            "taskflow_children_in_flight",
            "Child runs started or to start whose parent has not read their end yet.",
        )
        children.add_metric([], self.children)
        yield children
        undo = gauge(
            "taskflow_compensations",
            "Saga compensations by outcome: running, done, failed (the last attempt failed).",
            ["outcome"],
        )
        for outcome, n in sorted(self.compensations.items()):
            undo.add_metric([outcome], n)
        yield undo
        yield from self._snapshot(gauge)

    def _snapshot(self, gauge: Any) -> Iterator[Metric]:
        slots = gauge(
            "taskflow_slots_live",
            "Live slots by workflow, state and status (pending, open, claimed).",
            ["workflow", "state", "status"],
        )
        at_risk = gauge(
            "taskflow_clocks_at_risk",
            "Running SLA clocks of live slots at risk, by workflow and milestone.",
            ["workflow", "milestone"],
        )
        breached = gauge(
            "taskflow_clocks_breached",
            "SLA clocks of live slots past due and not met, by workflow and milestone.",
            ["workflow", "milestone"],
        )
        age = gauge(
            "taskflow_snapshot_age_seconds",
            "Seconds since a worker last computed the live slot and clock gauges "
            "(-1: never; a growing age means no worker runs).",
        )
        attention_gauge = gauge(
            "taskflow_needs_attention",
            "Items of needsAttention by reason (kept by the worker with the other gauges).",
            ["reason"],
        )
        if self.snapshot is None:
            age.add_metric([], -1.0)
        else:
            taken_at, body = self.snapshot
            age.add_metric([], max((self.now - taken_at).total_seconds(), 0.0))
            for workflow, state, status, n in body.get("slots", []):
                slots.add_metric([workflow, state, status], n)
            for workflow, milestone, risky, late in body.get("clocks", []):
                at_risk.add_metric([workflow, milestone], risky)
                breached.add_metric([workflow, milestone], late)
            for reason, n in sorted(body.get("attention", {}).items()):
                attention_gauge.add_metric([reason], n)
        yield from (slots, at_risk, breached, attention_gauge, age)


class _Scrape:
    """One scrape: this process's (or every process's) metrics, then the database's."""

    def __init__(self, read: _Read) -> None:
        self.read = read

    def collect(self) -> Iterator[Metric]:
        if multiprocess_mode():
            collector = multiprocess.MultiProcessCollector(None)  # type: ignore[no-untyped-call]
            yield from collector.collect()  # type: ignore[no-untyped-call]
        else:
            yield from REGISTRY.collect()
        yield from self.read.collect()


async def render(services: Services) -> bytes:
    """The exposition text of a scrape (a few index probes and one row: no scan)."""
    now = services.clock.now()
    async with services.db.connection() as conn:
        due, overdue, dead = await metrics_sql.timers(
            conn, now=now, overdue_before=now - OVERDUE_AFTER
        )
        oldest = await metrics_sql.oldest_open(conn)
        snapshot = await metrics_sql.read_snapshot(conn, SNAPSHOT)
        children = await child_rows.in_flight(conn)
        undo = await child_rows.compensations(conn)
    if services.db.replica is not None:
        # Its lag gauge (replica_metrics.py), fresh even when nothing read there.
        await services.db.replica.lag()
    sample_pools(services)
    read = _Read(now, due, overdue, dead, oldest, snapshot, children, undo)
    return prometheus_client.generate_latest(_Scrape(read))
