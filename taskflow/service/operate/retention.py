"""Retention: the worker prunes ended runs past their workflow's age, in small batches.

Each batch is one transaction over at most ``batch`` runs of one workflow
(``store/operate/retention.py``): the runs and everything they own go, their slots'
report measures stay (``pruned_slot``), a ``prune`` row records the counts, and
``taskflow_pruned_runs_total`` counts the runs. A workflow's own ``retention``
wins over ``TASKFLOW_RETENTION_DAYS``; with neither, nothing is pruned.
docs/operations.md, "Retention".
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime

from taskflow.core.operate import retention as core
from taskflow.service.common.container import Services
from taskflow.service.reports import metrics
from taskflow.store.history import partitions
from taskflow.store.operate import retention as store

log = logging.getLogger("taskflow.worker")

#: Runs per batch (one transaction), and batches per workflow per step.
BATCH = 100
MAX_BATCHES = 10


def enabled(services: Services) -> bool:
    """True when some loaded workflow keeps its ended runs for a limited time."""
    default = services.settings.retention_days
    return any(core.age(d.retention, default) is not None for d in services.catalog.latest())


@dataclass(frozen=True)
class Due:
    """A workflow that keeps ended runs for ``days``, and how many are past that now."""

    workflow: str
    days: int
    runs: int


async def due(services: Services, now: datetime | None = None) -> list[Due]:
    """Per workflow with an age, how many ended runs a prune would take (a dry run)."""
    at = now or services.clock.now()
    default = services.settings.retention_days
    found = []
    async with services.db.connection() as conn:
        for definition in services.catalog.latest():
            kept = core.age(definition.retention, default)
            if kept is None:
                continue
            runs = await store.due_count(
                conn, workflow=definition.name, before=core.cutoff(at, kept)
            )
            found.append(Due(definition.name, core.days(kept), runs))
    return found


async def keep_months(services: Services, now: datetime | None = None) -> list[str]:
    """The timeline's and the state spans' month partitions: this month's and the next ones
    made ahead, and the months whose every row belongs to a run past its workflow's age
    dropped whole (cheaper than deleting their rows one by one); the names dropped."""
    at = now or services.clock.now()
    default = services.settings.retention_days
    cutoffs = {}
    for definition in services.catalog.latest():
        kept = core.age(definition.retention, default)
        if kept is not None:
            cutoffs[definition.name] = core.cutoff(at, kept)
    async with services.db.connection() as conn:
        await partitions.make_ahead(conn, at)
        dropped = await partitions.drop_past(conn, cutoffs)
    for name in dropped:
        what = "state span" if name.startswith("state_span") else "timeline"
        log.info("retention: dropped %s partition %s", what, name, extra={"partition": name})
    return dropped


async def prune_due(
    services: Services,
    now: datetime | None = None,
    *,
    batch: int = BATCH,
    max_batches: int = MAX_BATCHES,
) -> dict[str, int]:
    """One step: prune up to ``max_batches`` batches of each workflow whose ended runs are
    past their age at ``now`` (default: the clock's now); runs pruned, by workflow."""
    at = now or services.clock.now()
    default = services.settings.retention_days
    pruned: dict[str, int] = {}
    for definition in services.catalog.latest():
        kept = core.age(definition.retention, default)
        if kept is None:
            continue
        before = core.cutoff(at, kept)
        for _ in range(max_batches):
            async with services.db.transaction() as conn:
                done = await store.prune_batch(
                    conn,
                    workflow=definition.name,
                    before=before,
                    retention_days=core.days(kept),
                    limit=batch,
                    now=at,
                )
            if not done.runs:
                break
            metrics.pruned(definition.name, done.runs)
            pruned[definition.name] = pruned.get(definition.name, 0) + done.runs
            log.info(
                "retention: pruned %d runs of %s",
                done.runs,
                definition.name,
                extra={
                    "workflow": definition.name,
                    "runs": done.runs,
                    "slots": done.slots,
                    "timeline": done.timeline,
                },
            )
            if done.runs < batch:
                break
    return pruned
