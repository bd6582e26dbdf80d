"""``work(orderBy: BREACH_RISK)``: the work list ranked by the breach forecast
(docs/forecast.md); the forecast's own type is ``breach_risk.py``."""

from __future__ import annotations

import enum

import strawberry

from taskflow.api.graphql.common import relay
from taskflow.api.graphql.common.context import Info
from taskflow.api.graphql.reports import breach_risk
from taskflow.api.graphql.slots.slot_type import SlotType, slot_from_row
from taskflow.core.access.principals import Principal
from taskflow.core.slots.filters import SlotFilter
from taskflow.service.reports import forecast


@strawberry.enum(description="The order of the work list.")
class WorkOrder(enum.Enum):
    URGENCY = strawberry.enum_value("urgency", description="Nearest due first, then priority.")
    BREACH_RISK = strawberry.enum_value(
        "breach_risk",
        description="Most likely to breach first (Slot.breachRisk), slots without a forecast "
        "last, ties by urgency; ranks the 1000 most urgent slots.",
    )


async def by_breach_risk_connection(
    info: Info, me: Principal, f: SlotFilter, first: int, after: str | None
) -> relay.Connection[SlotType]:
    """A page of the work list ranked by breach risk (an offset cursor: the ranking is
    taken afresh on every page, so a slot whose risk moved may show twice or be skipped)."""
    services = info.context.services
    ranked, total = await forecast.work_by_breach_risk(services, me, f)
    start = int(relay.decode_typed(after, "int")[0]) + 1 if after else 0
    page = ranked[start : start + first]
    # The ranking already read every forecast of the page: serve the fields from it.
    breach_risk.serve_known(info, {row.slot.id: risk for row, risk in ranked})
    edges = [
        relay.Edge(cursor=relay.encode_cursor(str(start + i)), node=slot_from_row(row))
        for i, (row, _) in enumerate(page)
    ]
    return relay.page(edges, start + first < len(ranked), total)
