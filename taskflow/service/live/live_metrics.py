"""The live feed's metrics on ``/metrics`` (docs/live.md, "Metrics")."""

from __future__ import annotations

from prometheus_client import Counter, Gauge, Histogram

from taskflow.service.reports import metrics

CONNECTIONS = Gauge(
    "taskflow_live_connections",
    "Open graphql-transport-ws connections (authenticated), summed over live processes.",
    multiprocess_mode="livesum",
    registry=metrics.REGISTRY,
)
SUBSCRIPTIONS = Gauge(
    "taskflow_live_subscriptions",
    "Open subscriptions by field (inbox, work, board, slot, run), summed over live processes.",
    ["field"],
    multiprocess_mode="livesum",
    registry=metrics.REGISTRY,
)
MESSAGES = Counter(
    "taskflow_live_messages",
    "Changes handed to subscribers, by field.",
    ["field"],
    registry=metrics.REGISTRY,
)
DROPPED = Counter(
    "taskflow_live_dropped_connections",
    "Connections closed by the server, by reason (slow, revoked, idle).",
    ["reason"],
    registry=metrics.REGISTRY,
)
LAG = Histogram(
    "taskflow_live_lag_seconds",
    "From the commit's notification reaching this process to its change queued for the socket.",
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5),
    registry=metrics.REGISTRY,
)
