"""``Slot.breachRisk``: the breach forecast of a slot the caller already sees (docs/forecast.md).

Batched per request: one read of the live slots and the history serves every slot of a
page. The forecast adds no access rule (it shows counts over past slots, never their
contents), so it is visible exactly where the slot is. (The work list ranked by it is
``forecast.py``, which imports the Slot type; this module must not.)
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping

import strawberry
from strawberry.dataloader import DataLoader

from taskflow.api.graphql.common.context import Info
from taskflow.service.reports import forecast


@strawberry.type(
    description="How likely a live slot is to breach its milestone, read from the workflow's "
    "own past slots, and why (docs/forecast.md)."
)
class BreachRisk:
    probability: float | None = strawberry.field(
        description="0 to 1; null when there is not enough history (see reason)."
    )
    at_risk: bool = strawberry.field(
        description="Whether the probability reaches the forecast threshold (0.5 by default)."
    )
    reason: str = strawberry.field(description="Why, in words: the cohort and its counts.")
    cohort: str = strawberry.field(
        description="The past slots it was read from: same opening hour band and queue load, "
        "one of them, all, or none."
    )
    samples: int = strawberry.field(
        description="Past slots in the cohort still open at this share of their budget."
    )
    breached: int = strawberry.field(description="How many of those breached.")
    history: int = strawberry.field(description="Past slots of this slot's name and state, in all.")
    share_elapsed: float = strawberry.field(description="Share of its budget already gone.")
    hour_band: str = strawberry.field(description="When it opened: e.g. 'weekday evening'.")
    load: str = strawberry.field(description="busy or quiet: its queue against the usual.")
    queue: int = strawberry.field(description="Other slots of its name open now.")

    @classmethod
    def of(cls, risk: forecast.BreachRisk, threshold: float) -> BreachRisk:
        return cls(
            probability=risk.probability,
            at_risk=risk.probability is not None and risk.probability >= threshold,
            reason=risk.reason,
            cohort=risk.cohort,
            samples=risk.survivors,
            breached=risk.breached,
            history=risk.history,
            share_elapsed=risk.share_elapsed,
            hour_band=risk.hour_band,
            load=risk.load,
            queue=risk.queue,
        )


Fetch = Callable[[list[str]], Awaitable[Mapping[str, forecast.BreachRisk | None]]]


def _serve(info: Info, fetch: Fetch) -> None:
    """This request's loader of ``breachRisk`` fields, reading forecasts with ``fetch``
    (the first one set stands)."""
    loaders = info.context.loaders
    if "breach_risk" in loaders:
        return
    threshold = info.context.services.settings.forecast_threshold

    async def load(keys: list[str]) -> list[BreachRisk | None]:
        found = await fetch(keys)
        return [
            BreachRisk.of(r, threshold) if (r := found.get(k)) is not None else None for k in keys
        ]

    loaders["breach_risk"] = DataLoader(load_fn=load)


async def breach_risk_of_slot(info: Info, slot_id: str) -> BreachRisk | None:
    """The forecast of a slot the caller already sees (null: not live, or no clock counting)."""
    services = info.context.services

    async def fetch(keys: list[str]) -> Mapping[str, forecast.BreachRisk | None]:
        return await forecast.breach_risks(services, keys)

    _serve(info, fetch)
    result: BreachRisk | None = await info.context.loaders["breach_risk"].load(slot_id)
    return result


def serve_known(info: Info, known: Mapping[str, forecast.BreachRisk | None]) -> None:
    """Answer this request's ``breachRisk`` fields from forecasts already read (a ranking)."""

    async def fetch(keys: list[str]) -> Mapping[str, forecast.BreachRisk | None]:
        return known

    _serve(info, fetch)
