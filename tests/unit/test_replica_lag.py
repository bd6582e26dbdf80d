"""When a read replica may serve, and the needs-attention item while it may not."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from taskflow.core.operate import replica_lag
from taskflow.core.operate.attention import Reason

NOW = datetime(2026, 12, 4, 21, 0, tzinfo=UTC)


def test_a_replica_within_the_bound_serves() -> None:
    assert not replica_lag.beyond_bound(0.0, 30.0)
    assert not replica_lag.beyond_bound(30.0, 30.0)  # the bound itself still serves


def test_a_replica_past_the_bound_or_silent_does_not() -> None:
    assert replica_lag.beyond_bound(30.5, 30.0)
    assert replica_lag.beyond_bound(None, 30.0)  # an unknown lag is not guessed at
    assert replica_lag.beyond_bound(0.1, 0.0)


def test_no_item_while_within_the_bound() -> None:
    assert replica_lag.attention_item(12.0, 30.0, NOW) is None


def test_the_item_dates_from_the_last_replayed_change_and_names_no_run() -> None:
    item = replica_lag.attention_item(90.0, 30.0, NOW)
    assert item is not None
    assert (item.reason, item.since, item.run_id, item.workflow, item.state) == (
        Reason.REPLICA_LAGGING,
        NOW - timedelta(seconds=90),
        None,
        None,
        None,
    )
    assert item.detail.startswith("the read replica is 90.0 s behind the primary (bound 30 s)")
    assert "mend the replica" in item.remedy


def test_a_silent_replica_is_listed_from_now() -> None:
    item = replica_lag.attention_item(None, 30.0, NOW)
    assert item is not None
    assert item.since == NOW
    assert "does not answer" in item.detail
