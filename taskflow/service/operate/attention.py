"""The needs-attention list: what waits for a person, for admins and leads where granted.

Each reason is found by its own indexed statement (``store/operate/attention.py``);
what clears it is in ``core/operate/attention.py`` and docs/operations.md.
"""

from __future__ import annotations

from collections.abc import Collection
from datetime import datetime

from taskflow.core.access import access as rules
from taskflow.core.access.principals import Principal
from taskflow.core.operate import replica_lag
from taskflow.core.operate.attention import Item, Reason, Windows
from taskflow.service.access import access
from taskflow.service.common.container import Services
from taskflow.store.operate import attention as store


def windows(services: Services) -> Windows:
    """The idle age and the expiry window from the settings, as of now."""
    settings = services.settings
    return Windows(
        now=services.clock.now(),
        idle_after=settings.idle_after,
        expiring_within=settings.event_expiring_within,
    )


async def listing(
    services: Services,
    actor: Principal,
    *,
    reasons: Collection[Reason] | None,
    workflow: str | None,
    after: tuple[datetime, str, str] | None,
    limit: int,
) -> tuple[list[Item], int]:
    """A page of items in (since, reason) order, and how many match, within the caller's
    grants (FORBIDDEN for anyone who is no lead, manager or admin anywhere)."""
    workflows = access.operate_workflows(actor, "read the needs-attention list")
    if workflow is not None:
        if workflows is not None and workflow not in workflows:
            return [], 0
        workflows = frozenset({workflow})
    async with services.db.connection() as conn:
        items, total = await store.page(
            conn, windows(services), workflows=workflows, reasons=reasons, after=after, limit=limit
        )
    lagging = await _replica_item(services, actor, reasons, workflow) if limit else None
    if lagging is None:
        return items, total
    total += 1
    if after is not None and (lagging.since, lagging.reason.value, lagging.ref) <= after:
        return items, total
    merged = sorted([*items, lagging], key=lambda i: (i.since, i.reason.value, i.ref))
    return merged[:limit], total


async def _replica_item(
    services: Services, actor: Principal, reasons: Collection[Reason] | None, workflow: str | None
) -> Item | None:
    """The REPLICA_LAGGING item while the replica is beyond its bound: for the deployment's
    admins (the default workspace's: another workspace's admins run no database) listing
    every workflow (it concerns none) who did not leave the reason out."""
    replica = services.db.replica
    if replica is None or not rules.is_deployment_admin(actor) or workflow is not None:
        return None
    if reasons is not None and Reason.REPLICA_LAGGING not in reasons:
        return None
    return replica_lag.attention_item(await replica.lag(), replica.max_lag, services.clock.now())


async def counts(services: Services) -> dict[Reason, int]:
    """Items per reason over every workflow (for the metric)."""
    async with services.db.connection() as conn:
        return await store.counts(conn, windows(services))
