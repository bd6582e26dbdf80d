"""The needs-attention list: what waits for a person, for admins and leads where granted.

Each reason is found by its own indexed statement (``store/operate/attention.py``);
what clears it is in ``core/operate/attention.py`` and docs/operations.md.
"""

from __future__ import annotations

from collections.abc import Collection
from datetime import datetime

from taskflow.core.access import access as rules
from taskflow.core.access.principals import Principal
from taskflow.core.operate import feed_attention, replica_lag
from taskflow.core.operate.attention import Item, Reason, Windows
from taskflow.service.access import access
from taskflow.service.common.container import Services
from taskflow.store.clocks import calendar_feeds
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
    own = await _deployment_items(services, actor, reasons, workflow) if limit else []
    if not own:
        return items, total
    total += len(own)
    if after is not None:
        own = [i for i in own if (i.since, i.reason.value, i.ref) > after]
    merged = sorted([*items, *own], key=lambda i: (i.since, i.reason.value, i.ref))
    return merged[:limit], total


#: The reasons that concern the deployment, not a run: no row of the branches finds them.
DEPLOYMENT = (Reason.REPLICA_LAGGING, Reason.CALENDAR_FEED_FAILING)


async def _deployment_items(
    services: Services, actor: Principal, reasons: Collection[Reason] | None, workflow: str | None
) -> list[Item]:
    """The deployment's own items (a lagging replica, failing holiday feeds): for its admins
    (the default workspace's: another workspace's admins run no database or calendars folder)
    listing every workflow (they concern none) who did not leave the reason out."""
    if not rules.is_deployment_admin(actor) or workflow is not None:
        return []
    wanted = set(DEPLOYMENT) if reasons is None else set(DEPLOYMENT) & set(reasons)
    found: list[Item] = []
    replica = services.db.replica
    if replica is not None and Reason.REPLICA_LAGGING in wanted:
        lagging = replica_lag.attention_item(
            await replica.lag(), replica.max_lag, services.clock.now()
        )
        found += [lagging] if lagging is not None else []
    if Reason.CALENDAR_FEED_FAILING in wanted:
        async with services.db.connection() as conn:
            found += [feed_attention.attention_item(f) for f in await calendar_feeds.failing(conn)]
    return found


async def counts(services: Services) -> dict[Reason, int]:
    """Items per reason over every workflow (for the metric)."""
    async with services.db.connection() as conn:
        found = await store.counts(conn, windows(services))
        found[Reason.CALENDAR_FEED_FAILING] = len(await calendar_feeds.failing(conn))
    return found
