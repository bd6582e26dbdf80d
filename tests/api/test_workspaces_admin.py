"""Workspace admin verbs (docs/workspaces.md): create, load principals into one, suspend
(its tokens refused with a typed reason), resume, export everything it holds."""

from __future__ import annotations

import pytest

from taskflow import errors
from taskflow.service.access import principals
from taskflow.service.common import container
from taskflow.service.workspaces import workspaces
from tests import conftest
from tests.api import workflows as w
from tests.conftest import gql

pytestmark = pytest.mark.anyio

ME = "{ me { id workspace } }"


async def test_a_workspace_is_created_suspended_resumed_and_exported(
    services: container.Services,
) -> None:
    made = await workspaces.create(services, "acme", max_runs=100)
    with pytest.raises(errors.ValidationError):
        await workspaces.create(services, "acme")
    assert {x.name for x in await workspaces.every(services)} == {"default", "acme"}
    people = conftest.example_people(app_everywhere=True)
    for person in people:
        person["id"] = f"acme-{person['id']}"
    await principals.load(services, people, workspace=made.id)
    token = services.staff_tokens.mint("acme-app", services.clock.now())
    async with conftest.asgi_client(services) as client:
        started = await w.start(client, token, "expense-approval", "expense", "E-1", w.EXPENSE)
        assert started["__typename"] == "StartRunSuccess"
        assert (await gql(client, ME, token=token)).ok()["me"]["workspace"] == made.id

        await workspaces.set_status(services, made.id, "suspended")
        refused = await gql(client, ME, token=token)
        assert refused.errors[0]["extensions"]["code"] == "UNAUTHENTICATED"
        assert refused.errors[0]["extensions"]["facts"]["reason"] == "WORKSPACE_SUSPENDED"

        await workspaces.set_status(services, made.id, "active")
        assert (await gql(client, ME, token=token)).ok()["me"]["id"]

    exported = await workspaces.export(services, made.id)
    assert exported["workspace"]["name"] == "acme"
    tables = exported["tables"]
    assert {p["id"] for p in tables["principal"]} == {p["id"] for p in people}
    assert [s["external_id"] for s in tables["subject"]] == ["E-1"]
    assert len(tables["run"]) == 1
    assert {s["name"] for s in tables["slot"]} >= {"finance_review"}
    assert all(row["workspace"] == made.id for rows in tables.values() for row in rows)
    with pytest.raises(errors.NotFound):
        await workspaces.export(services, "00000000-0000-4000-8000-00000000dead")
    with pytest.raises(errors.NotFound):
        await workspaces.set_status(services, "not-an-id", "suspended")
