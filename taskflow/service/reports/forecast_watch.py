"""The forecast watch, a worker pass: re-forecast a bounded batch of live slots and write
``clock.forecast_at_risk`` on those whose forecast reached the alert threshold, once until it
falls below again (docs/forecast.md, "The at-risk event"; the rule is core's
``forecast_watch``). The line reaches webhooks (the outbox trigger), automations and the
timeline like any other."""

from __future__ import annotations

from datetime import datetime, timedelta

from taskflow.core.reports import forecast, forecast_watch
from taskflow.service.common.container import Services
from taskflow.service.reports.forecast import LOOKBACK
from taskflow.store.reports import forecast as forecast_store
from taskflow.store.reports import forecast_watch as store
from taskflow.store.runs import timeline

#: Slots re-forecast per pass at most (the least recently forecast first).
BATCH = 200
#: How often the worker runs a pass (a slot's forecast moves with its share of the budget:
#: minutes matter, seconds do not).
EVERY = timedelta(minutes=5)


async def watch(
    services: Services,
    now: datetime | None = None,
    size: int = BATCH,
    threshold: float | None = None,
) -> list[str]:
    """One pass at ``now``: the ids of the slots whose flag went up (a line each).
    ``threshold``: the alert threshold of a slot whose milestone names none (default
    ``TASKFLOW_FORECAST_ALERT``); a milestone's ``forecast_alert`` wins."""
    now = now or services.clock.now()
    settings = services.settings
    default = settings.forecast_alert if threshold is None else threshold
    async with services.db.connection() as conn:
        live = await store.live(conn)
        ids = forecast_watch.batch(
            {i: s.peer for i, s in live.items()},
            {i: s.watched for i, s in live.items()},
            now,
            stop_share=settings.sla_at_risk,
            size=size,
        )
        if not ids:
            return []
        workflows = sorted({live[i].peer.key[0] for i in ids})
        history = await forecast_store.ended(conn, workflows, now - LOOKBACK, now)
    risks = dict(
        zip(
            ids,
            forecast.forecast_many(
                [live[i].peer for i in ids],
                history,
                [s.peer for s in live.values()],
                now,
                min_history=settings.forecast_min_history,
            ),
            strict=True,
        )
    )
    alerts = {i: _threshold(services, live[i], default) for i in ids}
    async with services.db.transaction() as conn:
        before = await store.locked_flags(conn, ids)
        after = {i: forecast_watch.flag(risks[i], before[i], alerts[i]) for i in before}
        risen = [i for i in before if forecast_watch.rises(before[i], after[i])]
        await timeline.append_audits(
            conn,
            [
                (
                    live[i].run_id,
                    forecast_watch.line(i, live[i].name, live[i].peer, risks[i], alerts[i], now),
                )
                for i in risen
            ],
        )
        await store.record(
            conn,
            {i: bool(f) for i, f in after.items()},
            {i: risks[i].probability for i in after},
            now,
        )
    return risen


def _threshold(services: Services, slot: store.LiveSlot, default: float) -> float:
    """The alert threshold of ``slot``: its milestone's, as its run's version declares it."""
    workflow, state, name = slot.peer.key
    definition = services.catalog.for_reading(workflow, slot.version)
    return forecast_watch.threshold(definition, state, name, slot.milestone, default)
