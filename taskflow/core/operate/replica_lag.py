"""A read replica that falls behind: when its reads go to the primary, and the needs-attention
item that says so while it lags (``REPLICA_LAGGING``, admins only: a deployment matter).

Pure: the lag comes in as seconds (None: the replica did not answer, or has never replayed a
transaction), the bound is ``TASKFLOW_DATABASE_READ_MAX_LAG_SECONDS``; the store measures the
lag (``store/common/replica.py``), docs/deploy.md ("Read replica") says what to do.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from taskflow.core.operate.attention import Item, Reason

#: The item's ``ref``: one replica per deployment, one item.
REF = "replica"


def beyond_bound(lag: float | None, max_lag: float) -> bool:
    """Whether a replica ``lag`` seconds behind may not serve reads bounded by ``max_lag``
    (an unknown lag counts as too far behind: a read that may not lag more must not guess)."""
    return lag is None or lag > max_lag


def attention_item(lag: float | None, max_lag: float, now: datetime) -> Item | None:
    """The ``REPLICA_LAGGING`` item while the replica is beyond the bound, else None. Since:
    when it replayed its last transaction (``now - lag``), or ``now`` when it does not
    answer (no instant to tell from)."""
    if not beyond_bound(lag, max_lag):
        return None
    if lag is None:
        since, detail = now, "the read replica does not answer (or has replayed nothing)"
    else:
        since = now - timedelta(seconds=lag)
        detail = f"the read replica is {lag:.1f} s behind the primary (bound {max_lag:g} s)"
    return Item(
        reason=Reason.REPLICA_LAGGING,
        since=since,
        ref=REF,
        run_id=None,
        workflow=None,
        state=None,
        detail=detail + ": reads that may lag go to the primary meanwhile",
    )
