"""Workspace admin verbs (docs/workspaces.md): create, load principals into one, suspend
(its tokens refused with a typed reason), resume, export everything it holds."""

from __future__ import annotations

import dataclasses
import json
from datetime import timedelta
from typing import Any

import pytest

from taskflow import errors
from taskflow.core.workspaces import refusals
from taskflow.service.access import principals
from taskflow.service.clocks import timers as timer_service
from taskflow.service.common import container
from taskflow.service.workspaces import workspaces
from taskflow.store.workspaces import scope as workspace_scope
from tests import conftest
from tests.api import magic as m
from tests.api import mcp_client
from tests.api import operation_inputs as ops
from tests.api import test_example_flows as flows
from tests.api import workflows as w
from tests.api.test_workspace_walk import app_services as app_services
from tests.api.test_workspace_walk import load_in
from tests.conftest import gql

pytestmark = pytest.mark.anyio

DEFAULT = ops.DEFAULT_WORKSPACE
EXTRA_HOOK = """mutation($input: CreateWebhookEndpointInput!) { createWebhookEndpoint(input: $input)
  { __typename } }"""
HELD = """{ webhookEndpoints { workspace { name } }
  automations(workflow: "expense-approval") { workspace { name } } }"""
ME = "{ me { id workspace { id name } } }"


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
        assert (await gql(client, ME, token=token)).ok()["me"]["workspace"] == {
            "id": made.id,
            "name": "acme",
        }

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
    with pytest.raises(refusals.WorkspaceUnchanged):
        await workspaces.set_status(services, made.id, "active")
    with pytest.raises(errors.ValidationError):
        await workspaces.set_status(services, DEFAULT, "suspended")


async def acme_with_people(services: container.Services, **limits: int) -> tuple[str, str]:
    """Workspace acme (``limits``) with the example people (ids ``acme-...``): (its id, the
    token of its admin ``acme-ada``)."""
    made = await workspaces.create(services, "acme", **limits)
    people = conftest.example_people(app_everywhere=True)
    for person in people:
        person["id"] = f"acme-{person['id']}"
    await principals.load(services, people, workspace=made.id)
    return made.id, services.staff_tokens.mint("acme-ada", services.clock.now())


def _op(name: str, variables: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    return ops.text(name), variables


async def test_the_default_workspaces_admin_manages_workspaces_over_graphql(
    services: container.Services, people: dict[str, str]
) -> None:
    acme, _ = await acme_with_people(services)
    ada = people["ada"]
    async with conftest.asgi_client(services) as client:
        listed = (await gql(client, *_op("workspaces", {"first": 1}), token=ada)).ok()
        page = listed["workspaces"]
        assert page["totalCount"] == 2
        assert [e["node"]["name"] for e in page["edges"]] == ["acme"]
        after = {"first": 5, "after": page["pageInfo"]["endCursor"]}
        rest = (await gql(client, *_op("workspaces", after), token=ada)).ok()["workspaces"]
        assert [e["node"]["name"] for e in rest["edges"]] == ["default"]

        made = (
            await gql(
                client,
                *_op("create_workspace", {"name": " beta ", "limits": {"runs": 3}, "key": "b"}),
                token=ada,
            )
        ).ok()["createWorkspace"]
        assert made["workspace"]["name"] == "beta"
        assert made["workspace"]["limits"] == {
            "runs": 3,
            "openSlots": None,
            "requestsPerMinute": None,
        }
        for bad in ("", " " * 3, "x" * 101, "acme"):
            refused = (await gql(client, *_op("create_workspace", {"name": bad}), token=ada)).ok()[
                "createWorkspace"
            ]
            assert (refused["__typename"], refused["code"]) == ("InvalidInput", "INVALID_INPUT")
        negative = {"name": "gamma", "limits": {"runs": -1}}
        refused = (await gql(client, *_op("create_workspace", negative), token=ada)).ok()
        assert refused["createWorkspace"]["code"] == "INVALID_INPUT"

        suspend = _op("suspend_workspace", {"workspaceId": acme})
        done = (await gql(client, *suspend, token=ada)).ok()["suspendWorkspace"]
        assert done["workspace"] == {"id": acme, "status": "suspended"}
        again = (await gql(client, *suspend, token=ada)).ok()["suspendWorkspace"]
        assert (again["__typename"], again["code"], again["status"]) == (
            "WorkspaceUnchanged", "WORKSPACE_UNCHANGED", "suspended",
        )  # fmt: skip
        for unknown in ("00000000-0000-4000-8000-00000000dead", "nope"):
            missing = (
                await gql(client, *_op("resume_workspace", {"workspaceId": unknown}), token=ada)
            ).ok()["resumeWorkspace"]
            assert missing["code"] == "NOT_FOUND"
        own = (
            await gql(client, *_op("suspend_workspace", {"workspaceId": DEFAULT}), token=ada)
        ).ok()["suspendWorkspace"]
        assert own["code"] == "INVALID_INPUT"
        resumed = (
            await gql(client, *_op("resume_workspace", {"workspaceId": acme}), token=ada)
        ).ok()["resumeWorkspace"]
        assert resumed["workspace"]["status"] == "active"

        limits = {"workspaceId": acme, "limits": {"openSlots": 7, "requestsPerMinute": 60}}
        limited = (await gql(client, *_op("set_workspace_limits", limits), token=ada)).ok()
        assert limited["setWorkspaceLimits"]["workspace"]["limits"] == {
            "runs": None, "openSlots": 7, "requestsPerMinute": 60,
        }  # fmt: skip

        exported = (
            await gql(client, *_op("export_workspace", {"workspaceId": acme}), token=ada)
        ).ok()["exportWorkspace"]
        assert exported["workspace"] == {"id": acme, "name": "acme"}
        assert exported["export"] == json.loads(
            json.dumps(await workspaces.export(services, acme), default=str)
        )
        assert {p["id"] for p in exported["export"]["tables"]["principal"]} >= {"acme-ada"}


#: Every workspace admin operation with variables reaching workspace acme.
def _every_verb(acme: str) -> list[tuple[str, dict[str, Any]]]:
    return [
        ("workspaces", {"first": 10}),
        ("create_workspace", {"name": "sneaky"}),
        ("suspend_workspace", {"workspaceId": acme}),
        ("resume_workspace", {"workspaceId": acme}),
        ("set_workspace_limits", {"workspaceId": acme, "limits": {"runs": 1}}),
        ("export_workspace", {"workspaceId": acme}),
        ("export_workspace", {"workspaceId": DEFAULT}),
    ]


async def test_only_the_default_workspaces_admins_may_use_the_workspace_verbs(
    services: container.Services, people: dict[str, str]
) -> None:
    """The access matrix of the workspace verbs: the default workspace's admin may; its other
    principals (a lead, a reviewer, an application) and another workspace's admin are refused
    NotAllowed, for an id that exists as for one that does not: no id leaks, nothing
    changes."""
    acme, acme_admin = await acme_with_people(services)
    before = await workspaces.every(services)
    refused_callers = {n: people[n] for n in ("leah", "fiona", "app")} | {"acme-ada": acme_admin}
    async with conftest.asgi_client(services) as client:
        for who, token in refused_callers.items():
            for name, variables in _every_verb(acme):
                answer = await gql(client, *_op(name, variables), token=token)
                if name == "workspaces":
                    assert answer.error_codes == ["FORBIDDEN"], (who, name)
                    continue
                (payload,) = answer.ok().values()
                assert (payload["__typename"], payload["code"]) == ("NotAllowed", "FORBIDDEN"), (
                    who, name, payload,
                )  # fmt: skip
                assert acme not in json.dumps(payload)
    assert await workspaces.every(services) == before


async def test_what_a_workspace_holds_shows_its_workspace(
    services: container.Services, people: dict[str, str]
) -> None:
    """Subject, Run, Slot, WebhookEndpoint, Automation and Principal name their workspace:
    the default one's for the default's people, acme's for acme's."""
    await acme_with_people(services)

    async def public(host: str) -> list[str]:
        return ["93.184.216.34"]

    services = dataclasses.replace(services, resolver=public)
    acme_app = services.staff_tokens.mint("acme-app", services.clock.now())
    acme_fiona = services.staff_tokens.mint("acme-fiona", services.clock.now())
    query = """query($id: ID!) { run(id: $id) { workspace { id name }
      subject { workspace { name } } slots { workspace { name } } } }"""
    async with conftest.asgi_client(services) as client:
        for app, fiona, name in ((people["app"], people["fiona"], "default"),
                                 (acme_app, acme_fiona, "acme")):  # fmt: skip
            started = await w.start(client, app, "expense-approval", "expense", "E-9", w.EXPENSE)
            run = (await gql(client, query, {"id": started["run"]["id"]}, token=app)).ok()["run"]
            assert run["workspace"]["name"] == name
            assert run["subject"]["workspace"] == {"name": name}
            assert {s["workspace"]["name"] for s in run["slots"]} == {name}
            me = (await gql(client, ME, token=fiona)).ok()["me"]
            assert me["workspace"]["name"] == name
        await gql(client, EXTRA_HOOK, {"input": {"url": "https://hooks.example/in"}},
                  token=people["ada"])  # fmt: skip
        automation = {"workflow": "expense-approval", "document": ops.AUTOMATION, "key": None}
        await gql(client, ops.text("create_automation"), automation, token=people["leah"])
        held = (await gql(client, HELD, token=people["ada"])).ok()
        assert held["webhookEndpoints"] == [{"workspace": {"name": "default"}}]
        assert held["automations"] == [{"workspace": {"name": "default"}}]


async def test_a_suspended_workspaces_timers_wait_and_fire_on_resume(
    services: container.Services, people: dict[str, str]
) -> None:
    """The worker's timer pass (timers.run_due) fires nothing of a suspended workspace, the
    default workspace's as usual; once it is resumed its timers fire, none lost."""
    acme, _ = await acme_with_people(services)
    acme_app = services.staff_tokens.mint("acme-app", services.clock.now())
    async with conftest.asgi_client(services) as client:
        await w.start(client, acme_app, "expense-approval", "expense", "E-1", w.EXPENSE)
        await w.start(client, people["app"], "expense-approval", "expense", "E-1", w.EXPENSE)
    async with services.db.connection() as conn:
        armed = {
            r["workspace"]: r["n"]
            for r in await conn.fetch(
                "SELECT workspace::text, count(*) AS n FROM timer WHERE status = 'armed'"
                " GROUP BY workspace"
            )
        }
    assert armed[acme] > 0
    assert armed[DEFAULT] > 0
    await workspaces.set_status(services, acme, "suspended")
    later = services.clock.now() + timedelta(days=60)
    fired_while_suspended = await timer_service.run_due(services, later)
    async with services.db.connection() as conn:
        waiting = await conn.fetchval(
            "SELECT count(*) FROM timer WHERE status = 'armed' AND workspace = $1", acme
        )
    assert waiting == armed[acme]
    assert fired_while_suspended >= armed[DEFAULT]
    await workspaces.set_status(services, acme, "active")
    assert await timer_service.run_due(services, later) >= armed[acme]
    async with services.db.connection() as conn:
        fired = await conn.fetchval(
            "SELECT count(*) FROM timer WHERE status = 'fired' AND workspace = $1", acme
        )
    assert fired >= armed[acme]


def tokens_of_acme(services: container.Services) -> dict[str, str]:
    """A token per example name, for acme's people (``acme-<name>``)."""
    now = services.clock.now()
    return {n: services.staff_tokens.mint(f"acme-{n}", now) for n in conftest.tokens_for(services)}


async def test_an_outsiders_link_upload_lands_in_its_slots_workspace(
    services: container.Services, people: dict[str, str]
) -> None:
    """An outsider's request is in no workspace: the file it uploads on acme's link page is
    recorded as acme's (its link's), unseen from the default workspace."""
    acme, _ = await acme_with_people(services)
    acme_people = tokens_of_acme(services)
    async with conftest.asgi_client(services) as client:
        made = await m.vendor_link(client, acme_people)
        path = m.path_of(made.link["url"])
        page = await client.get(path)
        assert page.status_code == 200, page.text
        done = await client.post(
            path,
            data={"_page": m.page_token(page.text)},
            files=[("document", ("bank.pdf", m.PDF, "application/pdf"))],
        )
        assert done.status_code == 200, done.text
    async with services.db.connection() as conn:
        places = await conn.fetch("SELECT workspace::text AS w, uploader FROM file_upload")
    assert [r["w"] for r in places] == [acme]
    assert places[0]["uploader"].startswith("link:")


async def test_mcp_tools_see_only_the_callers_workspace(
    app_services: container.Services,
) -> None:
    """The agent tools (the SDK's own client on /mcp) of acme's people answer acme's work
    only: the default workspace's run of the same subject is NOT_FOUND, its slots unlisted.
    The app connects as its non-superuser role (row-level security binds, as deployed)."""
    services = app_services
    await principals.load(services, conftest.example_people(app_everywhere=True))
    people = conftest.tokens_for(services)
    await acme_with_people(services)
    acme_people = tokens_of_acme(services)
    async with conftest.asgi_client(services) as client:
        theirs = await w.start_expense(client, people["app"], "EXP-1")
        ours = await w.start_expense(client, acme_people["app"], "EXP-1")
        their_slot = await w.slot_named(client, people["fiona"], "finance_review")
    async with mcp_client.connect(services, acme_people["fiona"]) as agent:
        inbox = mcp_client.answer(await agent.call_tool("inbox", {}))
        run = mcp_client.refusal(await agent.call_tool("run", {"runId": theirs["run"]["id"]}))
        own = mcp_client.answer(await agent.call_tool("run", {"runId": ours["run"]["id"]}))
    async with mcp_client.connect(services, acme_people["leah"]) as agent:
        work = mcp_client.answer(await agent.call_tool("work", {"workflow": "expense-approval"}))
    assert run["code"] == "NOT_FOUND"
    assert theirs["run"]["id"] not in str(inbox) + str(work)
    assert their_slot["id"] not in str(inbox) + str(work)
    assert len(inbox["edges"]) == 1
    assert len(work["edges"]) >= 1
    assert ours["run"]["id"] in str(own)


async def test_an_email_reply_lands_on_the_ticket_of_the_gateways_workspace(
    app_services: container.Services,
) -> None:
    """Both workspaces track ticket T-81723; acme's waits for the customer. Acme's mail
    gateway raises the reply by the reference quoted in the e-mail: it lands on acme's
    ticket; the default workspace's gateway finds no ticket of its own waiting, and its
    ticket is untouched (row-level security binds: the app's non-superuser role)."""
    services = app_services
    await principals.load(services, conftest.example_people(app_everywhere=True))
    people = conftest.tokens_for(services)
    await acme_with_people(services)
    acme = tokens_of_acme(services)
    reply = {"reply": "Firefox 140"}
    target = {"correlationKey": "T-81723"}
    state = "query($id: ID!) { run(id: $id) { state workspace { name } } }"
    async with conftest.asgi_client(services) as client:
        theirs = await w.start(
            client, people["helpdesk"], "support-ticket", "ticket", "T-81723", w.TICKET
        )
        ours = await w.start(
            client, acme["helpdesk"], "support-ticket", "ticket", "T-81723", w.TICKET
        )
        triage = await flows.take(client, acme["tess"], "triage")
        await w.complete(
            client, acme["tess"], triage["id"], {"priority": "P2", "category": "billing"}
        )
        asked = await flows.move(
            client, acme["sasha"], ours["run"]["id"], "ask_customer", {"question": "Which browser?"}
        )
        assert asked["run"]["state"] == "waiting_for_customer"
        landed = await flows.raise_event(
            client, acme["helpdesk"], "customer-replied", reply, target, key="mail-1"
        )
        assert landed["__typename"] == "RaiseEventSuccess", landed
        assert landed["slot"]["payload"] == reply
        ours_now = (await gql(client, state, {"id": ours["run"]["id"]}, token=acme["app"])).ok()
        assert ours_now["run"] == {"state": "open", "workspace": {"name": "acme"}}
        not_here = await flows.raise_event(
            client, people["helpdesk"], "customer-replied", reply, target, key="mail-2"
        )
        assert not_here["__typename"] != "RaiseEventSuccess", not_here
        theirs_now = (
            await gql(client, state, {"id": theirs["run"]["id"]}, token=people["app"])
        ).ok()
        assert theirs_now["run"] == {
            "state": theirs["run"]["state"],
            "workspace": {"name": "default"},
        }


def test_the_cli_creates_a_workspace_and_sets_its_limits(
    database_url: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from taskflow.cli import main

    monkeypatch.setenv("TASKFLOW_DATABASE_URL", database_url)
    monkeypatch.setenv("TASKFLOW_SECRET_KEYS", "k" * 48)
    assert main(["workspaces", "create", "acme", "--max-runs", "5"]) == 0
    made = capsys.readouterr().out
    assert "acme  active  (runs 5, open slots None, rpm None)" in made
    acme = made.split()[0]
    assert main(["workspaces", "limits", acme, "--max-open-slots", "7"]) == 0
    assert "(runs None, open slots 7, rpm None)" in capsys.readouterr().out
    assert main(["workspaces", "limits", acme, "--max-runs", "-1"]) == 1
    assert main(["workspaces", "limits", "00000000-0000-4000-8000-00000000dead"]) == 1


LOGIN = """mutation($input: UpsertPrincipalInput!) { upsertPrincipal(input: $input) {
  __typename ... on InvalidInput { code message field } } }"""
ROW = "SELECT display_name, roles, workspace::text FROM principal WHERE id = $1"


async def test_a_login_another_workspace_holds_is_refused_and_changes_nothing(
    app_services: container.Services,
) -> None:
    """Logins are unique across the deployment (docs/workspaces.md, "Logins"): acme's admin
    creating ``fiona`` (the default workspace's) gets INVALID_INPUT, as does loading her into
    acme from the CLI; the default workspace's fiona is left as she was, acme has none."""
    services = app_services
    await load_in(services, DEFAULT, conftest.example_people(app_everywhere=True))
    acme, admin = await acme_with_people(services)

    async def rows() -> list[tuple[Any, ...]]:
        with workspace_scope.every():
            async with services.db.connection() as conn:
                return [tuple(r) for r in await conn.fetch(ROW, "fiona")]

    before = await rows()
    assert [r[2] for r in before] == [DEFAULT]
    asked = {"login": "fiona", "displayName": "Fiona of acme", "roles": ["finance"]}
    async with conftest.asgi_client(services) as client:
        answer = (await gql(client, LOGIN, {"input": asked}, token=admin)).ok()["upsertPrincipal"]
    assert answer["__typename"] == "InvalidInput"
    assert answer["field"] == "login"
    assert "taken by a principal of another workspace" in answer["message"]
    with pytest.raises(errors.ValidationError, match="another workspace"):
        await principals.load(services, [{"id": "fiona", "display_name": "F"}], workspace=acme)
    assert await rows() == before
