"""A read replica beyond its lag bound, without a replica: the decision, the metric and the
needs-attention item, over HTTP.

The "replica" here is a second pool on the test's own database whose lag is told by the test
(``Replica.lag_source``, the one thing injected): everything else is the real code path, so
a read that may lag goes to the primary while the told lag is past the bound, the
``taskflow_replica_*`` series count it, and admins (only) see ``REPLICA_LAGGING`` until it is
back within the bound. tests/integration/test_read_replica.py does the same against a real
streaming replica (``.ci/with-replica``).
"""

from __future__ import annotations

import dataclasses
from datetime import timedelta
from typing import Any

import asyncpg
import httpx
import pytest

from taskflow import clock
from taskflow.api.graphql.common import relay
from taskflow.core.access import principals as core_principals
from taskflow.core.access.principals import Principal
from taskflow.service.common import container
from taskflow.service.history import history
from taskflow.service.operate import attention as attention_service
from taskflow.service.reports import replica_metrics
from taskflow.store.common import replica as replica_reads
from tests.api import attention
from tests.api.attention import OPERATIONS, START, start, token
from tests.conftest import gql
from tests.integration.test_metrics import Series, delta, parse, value

pytestmark = pytest.mark.anyio

services = attention.services

LIST = (OPERATIONS / "needs_attention.graphql").read_text()
BOUND = 30.0


class ToldLag:
    """The lag the "replica" reports: what the test says (None: it does not answer)."""

    def __init__(self) -> None:
        self.seconds: float | None = 0.0

    async def __call__(self, conn: Any) -> float | None:
        return self.seconds


@pytest.fixture
async def told(services: container.Services, database_url: str) -> ToldLag:
    """``services`` with a replica (a pool on its own database) whose lag the test tells."""
    lag = ToldLag()
    pool = await asyncpg.create_pool(database_url, min_size=0, max_size=2)
    assert pool is not None
    services.db.replica = replica_reads.Replica(pool, BOUND, lag)
    replica_metrics.watch(services.db)
    return lag  # the Database closes the replica's pool with its own


@dataclasses.dataclass
class Lagging:
    """The services with a told replica lag, their HTTP client, the clock at START."""

    services: container.Services
    told: ToldLag
    client: httpx.AsyncClient


@pytest.fixture
def lagging(
    services: container.Services,
    told: ToldLag,
    frozen_clock: clock.FrozenClock,
    client: httpx.AsyncClient,
) -> Lagging:
    frozen_clock.set(START)
    return Lagging(services, told, client)


async def scrape(client: httpx.AsyncClient) -> Series:
    response = await client.get("/metrics")
    assert response.status_code == 200, response.text
    return parse(response.text)


async def listed(
    client: httpx.AsyncClient, services: container.Services, who: str, **filter: Any
) -> list[dict[str, Any]]:
    found = await gql(
        client, LIST, {"filter": filter or None, "first": 50}, token=token(services, who)
    )
    data = found.ok()["needsAttention"]
    assert data["totalCount"] == len(data["edges"])
    return [edge["node"] for edge in data["edges"]]


async def test_reads_beyond_the_bound_go_to_the_primary_and_are_counted(lagging: Lagging) -> None:
    services, told, client = lagging.services, lagging.told, lagging.client
    run_id = await start(services, "triage", "C-1", {"size": 1})
    assert services.db.replica is not None
    before = await scrape(client)

    told.seconds = 5.0  # within the bound: the replica serves
    assert await history.run_visits(services, run_id, effective=False) != []
    assert services.db.replica.fallbacks == 0

    told.seconds = 95.0  # beyond: the same read goes to the primary, and still answers
    assert [v.state for v in await history.run_visits(services, run_id, effective=False)]
    told.seconds = None  # no answer: the primary too
    assert await history.run_visits(services, run_id, effective=False) != []
    assert services.db.replica.fallbacks == 2

    told.seconds = 95.0
    after = await scrape(client)  # a scrape measures the lag afresh
    assert delta(after, before, "taskflow_replica_fallbacks_total", why="lagging") == 1
    assert delta(after, before, "taskflow_replica_fallbacks_total", why="unavailable") == 1
    assert value(after, "taskflow_replica_lag_seconds") == 95.0


async def test_admins_see_replica_lagging_while_it_lags_and_others_never(lagging: Lagging) -> None:
    services, told, client = lagging.services, lagging.told, lagging.client
    assert await listed(client, services, "ada") == []

    told.seconds = 120.0
    seen = await listed(client, services, "ada")
    assert [(i["reason"], i["runId"], i["workflow"], i["state"]) for i in seen] == [
        ("REPLICA_LAGGING", None, None, None)
    ]
    assert seen[0]["since"] == (START - timedelta(minutes=2)).isoformat()  # last replayed
    assert "120.0 s behind the primary (bound 30 s)" in seen[0]["detail"]
    assert "mend the replica" in seen[0]["remedy"]
    # A lead sees no deployment matters; nor does a list narrowed to a workflow or to
    # other reasons.
    assert await listed(client, services, "leah") == []
    assert await listed(client, services, "ada", workflow="triage") == []
    assert await listed(client, services, "ada", reasons=["ROUTE_UNMATCHED"]) == []

    told.seconds = None
    assert "does not answer" in (await listed(client, services, "ada"))[0]["detail"]

    told.seconds = 2.0  # back within the bound: it clears by itself
    assert await listed(client, services, "ada") == []


async def test_replica_lagging_takes_its_place_among_runs_items_in_pages(lagging: Lagging) -> None:
    services, told, client = lagging.services, lagging.told, lagging.client
    unmatched = await attention.unmatched(services, "C-1")
    told.seconds = 3600.0  # behind since an hour before the route failed to match
    ada = token(services, "ada")

    first = (await gql(client, LIST, {"first": 1}, token=ada)).ok()["needsAttention"]
    assert [e["node"]["reason"] for e in first["edges"]] == ["REPLICA_LAGGING"]
    assert first["totalCount"] == 2
    assert first["pageInfo"]["hasNextPage"] is True
    cursor = first["pageInfo"]["endCursor"]
    rest = (await gql(client, LIST, {"first": 5, "after": cursor}, token=ada)).ok()
    assert [(e["node"]["reason"], e["node"]["runId"]) for e in rest["needsAttention"]["edges"]] == [
        ("ROUTE_UNMATCHED", relay.to_global_id("Run", unmatched))
    ]


async def test_another_workspaces_admin_is_not_told_of_the_deployments_replica(
    lagging: Lagging,
) -> None:
    services = lagging.services
    lagging.told.seconds = 120.0
    admin = core_principals.build({"id": "root", "display_name": "Root", "roles": ["admin"]})
    tenant = dataclasses.replace(admin, workspace="00000000-0000-4000-8000-0000000000b2")

    async def reasons(who: Principal) -> list[str]:
        items, _ = await attention_service.listing(
            services, who, reasons=None, workflow=None, after=None, limit=10
        )
        return [item.reason.value for item in items]

    assert await reasons(admin) == ["REPLICA_LAGGING"]
    assert await reasons(tenant) == []
