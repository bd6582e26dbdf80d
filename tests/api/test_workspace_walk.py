"""Workspaces keep teams apart, walked over the whole schema (docs/workspaces.md).

Two workspaces hold principals of the same roles, groups and grants, and subjects of the
same names. The application connects as a role without superuser rights (row-level
security binds it, as in a deployment). Every operation of graphql/operations/ (each root
field of the schema has one: a test below fails when a new field has none) is run by
workspace B's staff with variables that reach workspace A's objects: no answer shows one
of A's ids, and nothing of A changes.
"""

from __future__ import annotations

import base64
import dataclasses
import json
import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import asyncpg
import pytest

from taskflow import clock, config
from taskflow.service.access import principals as principal_service
from taskflow.service.common import container
from taskflow.service.compose import children
from taskflow.store.common import db
from taskflow.store.workspaces import schema as workspace_schema
from taskflow.store.workspaces import scope as workspace_scope
from tests import conftest
from tests.api import live
from tests.api import operation_inputs as ops
from tests.api import workflows as w
from tests.conftest import GraphQLResult, gql

pytestmark = pytest.mark.anyio

#: Workspace B (A is the default workspace, where the example people live).
B = "00000000-0000-4000-8000-0000000000b2"
#: The application's role: no superuser, so row-level security applies to it.
APP_ROLE = "taskflow_app"
SCHEMA = Path(__file__).resolve().parents[2] / "graphql" / "schema.graphql"


#: Its password: the embedded test server trusts local connections, Debian's (CI's pooler
#: pass, .ci/with-postgres) asks for one.
APP_PASSWORD = "taskflow-app-test"


def as_role(url: str, role: str) -> str:
    """``url`` connecting as ``role`` with its password."""
    scheme, _, rest = url.partition("://")
    _, at, host = rest.rpartition("@")
    return f"{scheme}://{role}:{APP_PASSWORD}@{host if at else rest}"


async def grant_app_role(admin_url: str) -> None:
    """The application's role on this database: rights on the tables, and every workspace
    as its sessions' default (a request names its own per transaction)."""
    conn = await asyncpg.connect(admin_url)
    try:
        await conn.execute(
            f"DO $$ BEGIN CREATE ROLE {APP_ROLE} LOGIN; "
            "EXCEPTION WHEN duplicate_object THEN NULL; END $$"
        )
        await conn.execute(f"ALTER ROLE {APP_ROLE} PASSWORD '{APP_PASSWORD}'")
        await conn.execute(f"ALTER ROLE {APP_ROLE} SET taskflow.workspace = '*'")
        await conn.execute(f"GRANT ALL ON ALL TABLES IN SCHEMA public TO {APP_ROLE}")
        await conn.execute(f"GRANT ALL ON ALL SEQUENCES IN SCHEMA public TO {APP_ROLE}")
        await conn.execute(
            f"INSERT INTO workspace (id, name) VALUES ('{B}', 'b') ON CONFLICT DO NOTHING"
        )
    finally:
        await conn.close()


@pytest.fixture
async def app_services(
    database_url: str, settings: config.Settings, frozen_clock: clock.FrozenClock
) -> AsyncIterator[container.Services]:
    await grant_app_role(database_url)
    # Straight to the server, as the application's role (a pooler would log in as its own
    # user, whom the policies may not bind).
    database = await db.Database.connect(as_role(database_url, APP_ROLE))
    # Private addresses allowed: the endpoints point at 127.0.0.1 (nothing is delivered).
    hooks = dataclasses.replace(settings.webhooks, allow_private=True)
    try:
        yield container.build(database, dataclasses.replace(settings, webhooks=hooks), frozen_clock)
    finally:
        await database.close()


def people_of_b() -> list[dict[str, Any]]:
    """The example people again, in workspace B, their ids prefixed ``b-``."""
    people = conftest.example_people(app_everywhere=True)
    for person in people:
        person["id"] = f"b-{person['id']}"
    return people


async def load_in(services: container.Services, workspace: str, people: list[Any]) -> None:
    workspace_scope.scope_to(workspace)
    try:
        await principal_service.load(services, people)
    finally:
        workspace_scope.scope_to("*")


#: Root fields graphql/operations/ has no operation for: walked here, with what reaches A's
#: webhook endpoint (``{endpoint}``), as B's admin.
EXTRA: dict[str, tuple[str, dict[str, Any]]] = {
    "webhookEndpoints": ("{ webhookEndpoints { id url } }", {}),
    "createWebhookEndpoint": (
        """mutation($input: CreateWebhookEndpointInput!) { createWebhookEndpoint(input: $input) {
        __typename ... on WebhookEndpointSuccess { endpoint { id } }
        ... on Refusal { message } } }""",
        {"input": {"url": "http://127.0.0.1:9/in", "workflows": ["expense-approval"]}},
    ),
    "updateWebhookEndpoint": (
        """mutation($input: UpdateWebhookEndpointInput!) { updateWebhookEndpoint(input: $input) {
        __typename ... on WebhookEndpointSuccess { endpoint { id url } } } }""",
        {"input": {"endpointId": "{endpoint}", "enabled": False}},
    ),
    "rotateWebhookSecret": (
        """mutation($input: RotateWebhookSecretInput!) { rotateWebhookSecret(input: $input) {
        __typename ... on WebhookEndpointSuccess { endpoint { id } } } }""",
        {"input": {"endpointId": "{endpoint}"}},
    ),
    "replayWebhookDeliveries": (
        """mutation($input: ReplayWebhookDeliveriesInput!) {
        replayWebhookDeliveries(input: $input) { __typename } }""",
        {"input": {"endpointId": "{endpoint}"}},
    ),
    "deleteWebhookEndpoint": (
        """mutation($input: DeleteWebhookEndpointInput!) { deleteWebhookEndpoint(input: $input) {
        __typename } }""",
        {"input": {"endpointId": "{endpoint}"}},
    ),
    "migrateRuns": (
        """mutation($input: MigrateRunsInput!) { migrateRuns(input: $input) { __typename } }""",
        {"input": {"workflow": "expense-approval", "toVersion": 1}},
    ),
}


def _reaching(variables: Any, endpoint: str) -> Any:
    return json.loads(json.dumps(variables).replace("{endpoint}", endpoint))


async def two_workspaces(services: container.Services) -> tuple[dict[str, str], dict[str, str]]:
    """The example people in A (the default workspace) and again in B (ids ``b-...``); a
    token per name in each, by the example names."""
    await load_in(services, "*", conftest.example_people(app_everywhere=True))
    await load_in(services, B, people_of_b())
    people_a = conftest.tokens_for(services)
    now = services.clock.now()
    return people_a, {n: services.staff_tokens.mint(f"b-{n}", now) for n in people_a}


def root_fields() -> set[str]:
    text = SCHEMA.read_text()
    found: set[str] = set()
    for kind in ("Query", "Mutation", "Subscription"):
        body = re.search(rf"type {kind} \{{(.*?)\n\}}", text, re.S)
        assert body is not None
        found |= set(re.findall(r"^\s{2}(\w+)[\(:]", body.group(1), re.M))
    return found


def test_every_root_field_of_the_schema_is_walked() -> None:
    walked: set[str] = set()
    for name in ops.names():
        operation = re.sub(r"#.*", "", ops.text(name))
        head = re.search(r"\{\s*(\w+)", operation)
        assert head is not None, name
        walked.add(head.group(1))
    walked |= set(EXTRA)
    assert root_fields() - walked == set(), "a root field no operation walks"


def _secrets(objects: ops.Objects) -> list[str]:
    """A's ids as answers would show them: global ids and their UUIDs."""
    out = []
    for global_id in (objects.run_id, objects.slot_id, objects.vendor_slot_id, objects.link_id):
        out.append(global_id)
        padded = global_id + "=" * (-len(global_id) % 4)
        out.append(base64.b64decode(padded).decode().partition(":")[2])
    return out


def _shown(body: Any) -> str:
    """What an answer shows, less a NOT_FOUND refusal's message (it repeats the id the caller
    sent, as it does for an id no row has)."""

    def strip(value: Any) -> Any:
        if isinstance(value, dict):
            refused = value.get("code") == "NOT_FOUND"
            return {k: strip(v) for k, v in value.items() if not (refused and k == "message")}
        if isinstance(value, list):
            return [strip(v) for v in value]
        return value

    return json.dumps(strip(body))


SNAPSHOT = {
    "run": "SELECT id, state, status, version FROM run ORDER BY id",
    "slot": "SELECT id, status, holder, version FROM slot ORDER BY id",
    "subject": "SELECT id, attributes, version, gone_at FROM subject ORDER BY id",
    "audit_event": "SELECT count(*) FROM audit_event",
    "magic_link": "SELECT id, revoked_at FROM magic_link ORDER BY id",
    "principal": "SELECT id, active, tokens_valid_after, working_hours, leave_spans, powers"
    " FROM principal ORDER BY id",
    "sla_clock": "SELECT id, pauses, met_at FROM sla_clock ORDER BY id",
    "webhook_endpoint": "SELECT id, url, enabled, secret FROM webhook_endpoint ORDER BY id",
}


async def snapshot_of_a(url: str) -> dict[str, list[tuple[Any, ...]]]:
    """Workspace A's rows as a superuser reads them (no row-level security)."""
    conn = await asyncpg.connect(url)
    try:
        await conn.execute("SET taskflow.workspace = '00000000-0000-4000-8000-000000000001'")
        out = {}
        for table, query in SNAPSHOT.items():
            scoped = query.replace(
                f"FROM {table}",
                f"FROM {table} WHERE workspace = '00000000-0000-4000-8000-000000000001'",
            )
            out[table] = [tuple(r) for r in await conn.fetch(scoped)]
        return out
    finally:
        await conn.close()


async def test_workspace_b_sees_and_reaches_nothing_of_workspace_a(
    app_services: container.Services, database_url: str
) -> None:
    services = app_services
    people_a, people_b = await two_workspaces(services)
    async with conftest.asgi_client(services) as client:
        objects = await ops.prepare(client, people_a)
        created = await client.post(
            "/graphql",
            json={
                "query": EXTRA["createWebhookEndpoint"][0],
                "variables": EXTRA["createWebhookEndpoint"][1],
            },
            headers={"authorization": f"Bearer {people_a['ada']}"},
        )
        assert "endpoint" in created.json()["data"]["createWebhookEndpoint"], created.text
        endpoint = created.json()["data"]["createWebhookEndpoint"]["endpoint"]["id"]
        # B's own objects of the same names: subjects EXP-7 in both workspaces.
        await ops.prepare(client, people_b)
        before = await snapshot_of_a(database_url)
        secrets = [*_secrets(objects), endpoint]
        walk = [
            (name, ops.RUNNER.get(name, "fiona"), ops.text(name), ops.variables(name, objects))
            for name in ops.names()
            # A's link token is A's credential (its holder is A's outsider, in no workspace).
            if name != "complete_with_link"
        ]
        walk += [(n, "ada", q, _reaching(v, endpoint)) for n, (q, v) in EXTRA.items()]
        leaks, errors, changed = [], [], []
        for name, runner, query, variables in walk:
            mark = await snapshot_of_a(database_url)
            response = await client.post(
                "/graphql",
                json={"query": query, "variables": variables},
                headers={"authorization": f"Bearer {people_b[runner]}"},
            )
            if response.status_code >= 500 or "INTERNAL" in GraphQLResult(response).error_codes:
                errors.append((name, response.text[:300]))
            shown = [s for s in secrets if s in _shown(response.json())]
            if await snapshot_of_a(database_url) != mark:
                changed.append((name, response.text[:300]))
            if shown:
                leaks.append((name, shown, response.text[:300]))
        after = await snapshot_of_a(database_url)
    assert not leaks, "\n".join(map(str, leaks))
    assert not errors, "\n".join(map(str, errors))
    assert not changed, "\n".join(map(str, changed))
    assert before == after


#: Tables no workspace holds: the workspaces themselves, definitions and calendars (files,
#: the same for every workspace), the keys and counters of the service itself.
GLOBAL = {
    "workspace",
    "deployed_definition",
    "calendar_span",
    "calendar_interval",
    "calendar_feed",
    "workspace_request_minute",  # a counter of the service keyed by workspace id
    "idempotency_key",
    "link_throttle",
    "metric_snapshot",
    "prune",
    "migration",
}
CATALOG = """
    SELECT c.relname, c.relrowsecurity, c.relforcerowsecurity,
           EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = c.oid
                   AND a.attname = 'workspace' AND NOT a.attisdropped) AS held,
           EXISTS (SELECT 1 FROM pg_policy p WHERE p.polrelid = c.oid
                   AND p.polname = 'workspace_wall') AS walled
    FROM pg_class c WHERE c.relnamespace = 'public'::regnamespace AND c.relkind IN ('r', 'p')
    ORDER BY 1
"""


async def test_every_table_is_held_and_walled_or_named_global(database_url: str) -> None:
    conn = await asyncpg.connect(database_url)
    try:
        rows = await conn.fetch(CATALOG)
    finally:
        await conn.close()
    undecided = [r["relname"] for r in rows if not r["held"] and r["relname"] not in GLOBAL]
    assert not undecided, "a table neither held by a workspace nor named GLOBAL"
    unwalled = [
        r["relname"]
        for r in rows
        if r["held"] and not (r["relrowsecurity"] and r["relforcerowsecurity"] and r["walled"])
    ]
    assert not unwalled


async def test_a_connection_of_workspace_a_selects_nothing_of_b_from_any_held_table(
    app_services: container.Services, database_url: str
) -> None:
    services = app_services
    people_a, people_b = await two_workspaces(services)
    async with conftest.asgi_client(services) as client:
        await ops.prepare(client, people_a)
        await ops.prepare(client, people_b)
    admin = await asyncpg.connect(database_url)
    try:
        held = [r["relname"] for r in await admin.fetch(CATALOG) if r["held"]]
        in_b = {
            t: await admin.fetchval(f"SELECT count(*) FROM {t} WHERE workspace = '{B}'")
            for t in held
        }
    finally:
        await admin.close()
    assert all(in_b[t] for t in ("run", "slot", "audit_event", "principal"))
    app = await asyncpg.connect(as_role(database_url, APP_ROLE))
    try:
        seen: dict[str, dict[str, int]] = {}
        for setting in (workspace_scope.EVERY, "00000000-0000-4000-8000-000000000001", None):
            async with app.transaction():
                if setting is not None:
                    await app.execute("SELECT set_config('taskflow.workspace', $1, true)", setting)
                else:  # the role's default ('*') taken away: nothing is seen (fail closed)
                    await app.execute("SELECT set_config('taskflow.workspace', '', true)")
                seen[str(setting)] = {
                    t: await app.fetchval(f"SELECT count(*) FROM {t} WHERE workspace = '{B}'")
                    for t in held
                }
    finally:
        await app.close()
    assert seen["*"] == in_b
    assert seen["00000000-0000-4000-8000-000000000001"] == dict.fromkeys(held, 0)
    assert seen["None"] == dict.fromkeys(held, 0)


SUB_RUN = "subscription($id: ID!) { runChanged(id: $id) { cursor runId } }"
SUB_BOARD = """subscription { boardChanged(workflow: "expense-approval") { runId } }"""
SUB_WORK = """subscription { workChanged(filter: {audience: ["role:finance"]}) { slotId } }"""


async def test_subscriptions_of_b_hear_nothing_of_a(
    app_services: container.Services,
) -> None:
    services = app_services
    people_a, people_b = await two_workspaces(services)
    async with conftest.asgi_client(services) as client:
        started = await w.start(
            client, people_a["app"], "expense-approval", "expense", "E-1", w.EXPENSE
        )
        async with (
            live.connect(client, people_a["fiona"]) as fiona_a,
            live.connect(client, people_b["fiona"]) as fiona,
            live.connect(client, people_b["leah"]) as leah,
        ):
            # A's reviewer first: B's subscriptions of the same filters join no group of A's.
            await fiona_a.subscribe("inbox", live.INBOX)
            await fiona_a.subscribe("work", SUB_WORK)
            await leah.subscribe("run", SUB_RUN, {"id": started["run"]["id"]})
            refused = await leah.next()
            assert refused["type"] == "error", refused
            assert refused["payload"][0]["extensions"]["code"] == "NOT_FOUND"
            await fiona.subscribe("inbox", live.INBOX)
            await fiona.subscribe("work", SUB_WORK)
            await leah.subscribe("board", SUB_BOARD)
            await live.subscribed(services, 5)
            # A's new expense opens a finance review: B's finance reviewer hears nothing.
            await w.start(client, people_a["app"], "expense-approval", "expense", "E-2", w.EXPENSE)
            assert await fiona.quiet(0.5) == []
            assert await leah.quiet(0.2) == []
            assert {m["id"] for m in await fiona_a.quiet(0.5)} >= {"inbox", "work"}
            # B's own does reach them (the sockets listen).
            await w.start(client, people_b["app"], "expense-approval", "expense", "E-2", w.EXPENSE)
            assert {m["id"] for m in await fiona.quiet(1.0)} >= {"inbox", "work"}


async def test_a_child_run_the_worker_starts_is_its_parents_workspaces(
    database_url: str, settings: config.Settings, frozen_clock: clock.FrozenClock
) -> None:
    """The worker acts in every workspace; what it creates without a parent row (a child's
    subject) is the parent's workspace's, so B's staff read the child, and A's do not."""
    await grant_app_role(database_url)
    compose = str(Path(__file__).parent / "compose_workflows.py")
    with_compose = dataclasses.replace(settings, workflows=(*settings.workflows, compose))
    database = await db.Database.connect(as_role(database_url, APP_ROLE))
    try:
        services = container.build(database, with_compose, frozen_clock)
        people_a, people_b = await two_workspaces(services)
        async with conftest.asgi_client(services) as client:
            started = await w.start(
                client, people_b["app"], "compose-parent", "doc", "D-1", {"title": "Doc D-1"}
            )
            assert started["__typename"] == "StartRunSuccess", started
            # A's parent and B's second are due too: the lane starts the children of
            # parents of one workspace together, each workspace's in a transaction of its own.
            for people, doc in ((people_a, "D-2"), (people_b, "D-3")):
                other = await w.start(
                    client, people["app"], "compose-parent", "doc", doc, {"title": doc}
                )
                assert other["__typename"] == "StartRunSuccess", other
            with workspace_scope.every():  # as the worker process
                assert await children.run_due(services) == 6
            query = """query($id: ID!) { run(id: $id) { children { run { id } } } }"""
            variables = {"id": started["run"]["id"]}
            found = (await gql(client, query, variables, token=people_b["ada"])).ok()["run"]
            kids = [c["run"]["id"] for c in found["children"]]
            assert len(kids) == 2
            for kid in kids:
                seen_b = await gql(client, RUN, {"id": kid}, token=people_b["ada"])
                seen_a = await gql(client, RUN, {"id": kid}, token=people_a["ada"])
                assert seen_b.ok()["run"]["id"] == kid
                assert seen_a.ok()["run"] is None
    finally:
        await database.close()
    admin = await asyncpg.connect(database_url)
    try:
        # Every subject a run was started for, the children's included, is its run's
        # workspace's (A's parent's children A's, B's B's).
        places = await admin.fetch(
            "SELECT DISTINCT j.workspace::text FROM run r JOIN subject j ON j.id = r.subject"
            " WHERE r.workflow LIKE 'compose-%'"
        )
        workspaces_of_runs = await admin.fetch(
            "SELECT DISTINCT workspace::text AS w FROM run WHERE workflow LIKE 'compose-%'"
        )
        mixed = await admin.fetch(
            "SELECT r.workspace = j.workspace AS same FROM run r"
            " JOIN subject j ON j.id = r.subject WHERE r.workflow LIKE 'compose-%'"
        )
    finally:
        await admin.close()
    assert sorted(r["w"] for r in workspaces_of_runs) == sorted([workspace_schema.DEFAULT, B])
    assert sorted(r[0] for r in places) == sorted([workspace_schema.DEFAULT, B])
    # Each run's subject is its own workspace's: a child's subject is its parent's.
    assert all(r["same"] for r in mixed)


RUN = "query($id: ID!) { run(id: $id) { id } }"


async def test_queue_and_forecast_rows_take_their_parents_workspace_and_are_walled(
    app_services: container.Services, database_url: str
) -> None:
    """The tables walled by migration 2026-12-04T19:30: a queued line, a waiting action and a
    slot's forecast written by a worker (every workspace) are B's when their line, run or
    slot is; A's transaction sees none of them, B's sees each."""
    services = app_services
    _, people_b = await two_workspaces(services)
    async with conftest.asgi_client(services) as client:
        await ops.prepare(client, people_b)
    admin = await asyncpg.connect(database_url)
    try:
        slot, run = await admin.fetchrow(
            f"SELECT id, run FROM slot WHERE workspace = '{B}' ORDER BY id LIMIT 1"
        )
        line = await admin.fetchval(f"SELECT max(id) FROM audit_event WHERE run = '{run}'")
        automation = await admin.fetchval(
            "INSERT INTO automation (workflow, name, document, author, created_at, updated_at)"
            " VALUES ('expense-approval', 'nudge', '{}', 'ada', now(), now()) RETURNING id"
        )
        await admin.execute("DELETE FROM automation_line")
        await admin.execute("INSERT INTO automation_line (line) VALUES ($1)", line)
        await admin.execute(
            "INSERT INTO automation_pending (automation, version, line, run, next_action, due_at,"
            " created_at) VALUES ($1, 1, $2, $3, 1, now(), now())",
            automation,
            line,
            run,
        )
        await admin.execute("INSERT INTO slot_forecast (slot) VALUES ($1)", slot)
        tables = ("automation_line", "automation_pending", "slot_forecast")
        owners = {t: await admin.fetchval(f"SELECT workspace::text FROM {t}") for t in tables}
    finally:
        await admin.close()
    assert owners == dict.fromkeys(tables, B)
    app = await asyncpg.connect(as_role(database_url, APP_ROLE))
    try:
        seen: dict[str, list[int]] = {}
        for workspace in ("00000000-0000-4000-8000-000000000001", B):
            async with app.transaction():
                await app.execute("SELECT set_config('taskflow.workspace', $1, true)", workspace)
                seen[workspace] = [await app.fetchval(f"SELECT count(*) FROM {t}") for t in tables]
    finally:
        await app.close()
    assert seen == {"00000000-0000-4000-8000-000000000001": [0, 0, 0], B: [1, 1, 1]}
