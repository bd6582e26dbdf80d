"""The breach forecast of live slots and its backtest (docs/forecast.md).

The forecast is a field of a slot the caller already sees (``Slot.breachRisk``), so it
adds no access rule: it reads only counts over the workflow's history, never another
slot's contents. The history is the slots opened in the last ``LOOKBACK`` that ended.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta

from taskflow.core.access import access as rules
from taskflow.core.access.principals import Principal
from taskflow.core.reports import forecast
from taskflow.core.slots import filters
from taskflow.service.access import access
from taskflow.service.common.container import Services
from taskflow.service.slots import views
from taskflow.store.reports import forecast as store

#: How far back the peers are read.
LOOKBACK = timedelta(weeks=8)
BreachRisk = forecast.BreachRisk
Backtest = forecast.Backtest


async def breach_risks(
    services: Services, slot_ids: Sequence[str], now: datetime | None = None
) -> dict[str, forecast.BreachRisk]:
    """The forecast of each of ``slot_ids`` that is live with a counting clock, by id (the
    caller has checked the slots are visible)."""
    now = now or services.clock.now()
    async with services.db.connection() as conn:
        live = await store.live(conn, None)
        wanted = {i: live[i] for i in slot_ids if i in live}
        if not wanted:
            return {}
        workflows = sorted({p.key[0] for p in wanted.values()})
        history = await store.ended(conn, workflows, now - LOOKBACK, now)
    settings = services.settings
    pool = list(live.values())
    ids = list(wanted)
    risks = forecast.forecast_many(
        [wanted[i] for i in ids], history, pool, now, min_history=settings.forecast_min_history
    )
    return dict(zip(ids, risks, strict=True))


async def backtest(
    services: Services,
    actor: Principal,
    weeks: int,
    workflow: str | None = None,
    threshold: float | None = None,
) -> forecast.Backtest:
    """Replay the last ``weeks``: each past slot forecast at half its budget from what had
    ended by then, scored against what happened. Needs a lead or manager on the workflows."""
    found = access.require_reports(actor)
    if workflow is not None:
        services.catalog.get(workflow)  # NOT_FOUND names the workflows there are
    now = services.clock.now()
    async with services.db.connection() as conn:
        history = await store.ended(
            conn, [workflow] if workflow else None, now - timedelta(weeks=weeks) - LOOKBACK, now
        )
    history = [p for p in history if rules.covers_whole_workflow(found, p.key[0])]
    settings = services.settings
    return forecast.backtest(
        history,
        now,
        weeks,
        threshold=settings.forecast_threshold if threshold is None else threshold,
        min_history=settings.forecast_min_history,
    )


#: ``work(orderBy: BREACH_RISK)`` ranks at most this many slots (the nearest due first).
RANKED = 1000


async def work_by_breach_risk(
    services: Services, actor: Principal, f: filters.SlotFilter
) -> tuple[list[tuple[views.SlotRow, forecast.BreachRisk | None]], int]:
    """The live slots of ``work`` (the same reach, the same filter), most likely to breach
    first (no forecast last, then the usual order), with the total of the list. It ranks the
    ``RANKED`` most urgent of them."""
    rows: list[views.SlotRow] = []
    after: views.Cursor | None = None
    total = 0
    while len(rows) < RANKED:
        found, total, has_next = await views.work(
            services, actor, f, first=views.MAX_FIRST, after=after
        )
        rows.extend(found)
        if not has_next or not found:
            break
        after = found[-1].cursor
    risks = await breach_risks(services, [r.slot.id for r in rows])

    def rank(row: views.SlotRow) -> float:
        risk = risks.get(row.slot.id)
        probability = risk.probability if risk is not None else None
        return -(probability if probability is not None else -1.0)

    ranked = sorted(rows, key=rank)  # stable: ties keep the usual order
    return [(r, risks.get(r.slot.id)) for r in ranked], total
