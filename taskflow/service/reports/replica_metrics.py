"""The read replica's metrics on ``/metrics`` (docs/deploy.md, "Read replica"): how far
behind it is, and the reads sent to the primary instead (``store/common/replica.py``)."""

from __future__ import annotations

from prometheus_client import Counter, Gauge

from taskflow.service.reports import metrics
from taskflow.store.common import db

LAG = Gauge(
    "taskflow_replica_lag_seconds",
    "Seconds the read replica's replay is behind the primary, as last measured (on each "
    "read that may lag, and at each scrape); -1: it did not answer or cannot tell.",
    multiprocess_mode="livemostrecent",
    registry=metrics.REGISTRY,
)
FALLBACKS = Counter(
    "taskflow_replica_fallbacks",
    "Reads that may lag sent to the primary instead of the replica, by why (lagging: "
    "beyond TASKFLOW_DATABASE_READ_MAX_LAG_SECONDS; unavailable: it did not answer).",
    ["why"],
    registry=metrics.REGISTRY,
)


class _Watcher:
    """The replica's lag and fallbacks as metrics (``store/common/replica.Watcher``)."""

    def measured(self, lag: float | None) -> None:
        LAG.set(-1.0 if lag is None else lag)

    def fell_back(self, why: str) -> None:
        FALLBACKS.labels(why).inc()


def watch(database: db.Database) -> None:
    """Count ``database``'s replica reads in the metrics (when it has a replica)."""
    if database.replica is not None:
        database.replica.watcher = _Watcher()
