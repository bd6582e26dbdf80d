"""Test infrastructure shared by every suite.

One PostgreSQL per session (the embedded one, or ``TASKFLOW_TEST_DATABASE_URL``),
a template database migrated once, and a fresh copy of it per test. The app is
spoken to over real ASGI HTTP (and websockets) with httpx; time comes from a
:class:`taskflow.clock.FrozenClock` that tests move.

The app, the store and the services are imported inside the fixtures that need
them, so the pure unit tests load none of it.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import inspect
import itertools
import json
import os
import shutil
import tempfile
import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import asyncpg
import httpx
import pytest

from taskflow import clock
from taskflow.config import config

if TYPE_CHECKING:
    from taskflow.service.common import container

#: One migrated template per pytest-xdist worker: they may share one server (CI's external one).
TEMPLATE = f"taskflow_template_{os.environ.get('PYTEST_XDIST_WORKER', 'main')}"
TEST_SECRET = "test-signing-key-not-for-production-0123456789"
EXAMPLE_PRINCIPALS = config.PROJECT_ROOT / "examples" / "principals.json"
#: A Tuesday morning in London, the default "now" of every test.
T0 = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)

_numbers = itertools.count()

#: PgBouncer in transaction mode in front of the test server (``.ci/with-pgbouncer``): the
#: services then connect through it, as a pooled deployment does.
POOLER_URL = os.environ.get("TASKFLOW_TEST_POOLER_URL") or None


async def connect_database(database_url: str, **options: Any) -> Any:
    """A :class:`taskflow.store.common.db.Database` on the test database at ``database_url``
    (a direct URL): through the pooler when there is one, configured as docs/deploy.md
    says (``TASKFLOW_DB_STATEMENT_CACHE_SIZE=0``, LISTEN on the direct URL)."""
    from taskflow.store.common import db

    if POOLER_URL is None:
        return await db.Database.connect(database_url, **options)
    name = database_url.partition("?")[0].rsplit("/", 1)[1]
    return await db.Database.connect(
        db.with_database(POOLER_URL, name),
        statement_cache_size=0,
        listen_url=database_url,
        **options,
    )


async def reconnect(database: Any, **options: Any) -> Any:
    """Another pool on ``database``'s database, connected the same way (pooler or not)."""
    from taskflow.store.common import db

    return await db.Database.connect(
        database.url,
        statement_cache_size=database.statement_cache_size,
        listen_url=database.listen_url,
        **options,
    )


@pytest.fixture(scope="session")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="session")
def pg_admin_url() -> Iterator[str]:
    """An admin URL of the session's PostgreSQL server."""
    external = os.environ.get("TASKFLOW_TEST_DATABASE_URL")
    if external:
        yield external
        return
    from taskflow.store.common import embedded

    data_dir = Path(tempfile.mkdtemp(prefix="taskflow-test-", dir="/tmp"))
    server = embedded.EmbeddedPostgres(data_dir)
    url = server.url()

    async def tune() -> None:
        conn = await asyncpg.connect(url)
        # Durability is pointless for throwaway test databases and costs ~4x per clone.
        for setting in ("fsync = off", "synchronous_commit = off", "full_page_writes = off"):
            await conn.execute(f"ALTER SYSTEM SET {setting}")
        await conn.execute("SELECT pg_reload_conf()")
        await conn.close()

    asyncio.run(tune())
    try:
        yield url
    finally:
        server.stop()
        # Each session's cluster is ~70 MB: left behind, a day of test runs fills the disk.
        shutil.rmtree(data_dir, ignore_errors=True)


@pytest.fixture(scope="session")
def template_url(pg_admin_url: str) -> str:
    """A database migrated once, cloned for every test."""

    from taskflow.store.common import db, migrate

    async def build() -> None:
        conn = await asyncpg.connect(pg_admin_url)
        await conn.execute(f"DROP DATABASE IF EXISTS {TEMPLATE} WITH (FORCE)")
        await conn.execute(f"CREATE DATABASE {TEMPLATE}")
        await conn.close()
        await migrate.migrate(db.with_database(pg_admin_url, TEMPLATE))

    asyncio.run(build())
    return db.with_database(pg_admin_url, TEMPLATE)


@pytest.fixture
def database_url(pg_admin_url: str, template_url: str) -> Iterator[str]:
    """A fresh database, a copy of the migrated template, dropped afterwards."""
    from taskflow.store.common import db

    name = f"t_{os.getpid()}_{next(_numbers)}_{uuid.uuid4().hex[:6]}"

    async def run(statement: str) -> None:
        conn = await asyncpg.connect(pg_admin_url)
        try:
            await conn.execute(statement)
        finally:
            await conn.close()

    asyncio.run(run(f"CREATE DATABASE {name} TEMPLATE {TEMPLATE}"))
    try:
        yield db.with_database(pg_admin_url, name)
    finally:
        asyncio.run(run(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)"))


@pytest.fixture
def frozen_clock() -> clock.FrozenClock:
    return clock.FrozenClock(T0)


@pytest.fixture
def settings(tmp_path: Path) -> config.Settings:
    loaded = config.load(
        {
            "TASKFLOW_DATABASE_URL": "postgresql://configured-by-fixture/",
            "TASKFLOW_SECRET_KEYS": TEST_SECRET,
            "TASKFLOW_DATA_DIR": str(tmp_path / "data"),
            "TASKFLOW_PUBLIC_URL": "http://taskflow.test",
        }
    )
    return replace(loaded, database_url=None)


@pytest.fixture
async def services(
    database_url: str, settings: config.Settings, frozen_clock: clock.FrozenClock
) -> AsyncIterator[container.Services]:
    from taskflow.service.common import container

    database = await connect_database(database_url, min_size=1, max_size=10)
    try:
        yield container.build(database, settings, frozen_clock)
    finally:
        await database.close()


@pytest.fixture
async def loaded(services: container.Services) -> dict[str, str]:
    """The report tests' dataset (``tests/reports_dataset.py``) loaded; its ids by name."""
    from tests import reports_dataset

    async with services.db.transaction() as conn:
        return await reports_dataset.load(conn)


@pytest.fixture
async def client(services: container.Services) -> AsyncIterator[httpx.AsyncClient]:
    """An HTTP (and websocket) client speaking to the real ASGI app."""
    async with asgi_client(services) as http:
        yield http


@contextlib.asynccontextmanager
async def asgi_client(services: container.Services) -> AsyncIterator[httpx.AsyncClient]:
    """An HTTP (and websocket) client speaking to the real ASGI app built on ``services``."""
    from httpx_ws.transport import ASGIWebSocketTransport

    from taskflow.api import app as api_app

    transport = ASGIWebSocketTransport(api_app.create_app(services=services))
    async with httpx.AsyncClient(transport=transport, base_url="http://taskflow.test") as http:
        yield http


def tokens_for(services: container.Services) -> dict[str, str]:
    """A bearer token for every example principal, minted at the services' now."""
    now = services.clock.now()
    return {r["id"]: services.staff_tokens.mint(r["id"], now) for r in example_people()}


@pytest.fixture
async def people(services: container.Services) -> dict[str, str]:
    """The example principals loaded; returns a bearer token per principal id."""
    from taskflow.service.access import principals

    await principals.load(services, example_people())
    return tokens_for(services)


def example_people(
    *, app_everywhere: bool = False, powerless: bool = False, **powers: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """The example principals; ``app_everywhere`` grants the example app every workflow (its
    own grants name the example workflows: tests with workflows of their own need more),
    ``powerless`` takes every grant away (for tests that load only workflows of their own),
    and each keyword argument sets that principal's powers (``leah=[...]``)."""
    people: list[dict[str, Any]] = json.loads(EXAMPLE_PRINCIPALS.read_text())
    for person in people:
        if powerless:
            person.pop("powers", None)
        if app_everywhere and person["id"] == "app":
            person["powers"] = [{"power": "integration"}]
        if person["id"] in powers:
            person["powers"] = powers[person["id"]]
    return people


def with_settings(services: container.Services, **changes: Any) -> container.Services:
    """``services`` with its settings changed by ``changes`` (``metrics="off"``...)."""
    return replace(services, settings=replace(services.settings, **changes))


@contextlib.asynccontextmanager
async def services_with(
    database_url: str,
    settings: config.Settings,
    now: clock.Clock,
    *workflows: Path,
    people: list[dict[str, Any]] | None = None,
    examples: bool = True,
) -> AsyncIterator[container.Services]:
    """Services with the examples (none if not ``examples``) plus ``workflows`` (test
    definitions), and ``people`` loaded (by default the example people, the example app
    granted every workflow)."""
    from taskflow.service.access import principals as principal_service
    from taskflow.service.common import container

    ours = tuple(map(str, workflows))
    with_ours = replace(settings, workflows=(*settings.workflows, *ours) if examples else ours)
    database = await connect_database(database_url, min_size=1, max_size=10)
    try:
        services = container.build(database, with_ours, now)
        loaded = example_people(app_everywhere=True) if people is None else copy.deepcopy(people)
        await principal_service.load(services, loaded)
        yield services
    finally:
        await database.close()


def services_fixture(
    name: str,
    *workflows: Path,
    doc: str,
    people: list[dict[str, Any]] | None = None,
    examples: bool = True,
) -> Any:
    """A fixture named ``name`` of :func:`services_with` for ``workflows`` on the test's fresh
    database and frozen clock (``step_services = services_fixture("step_services", ...)``)."""

    async def fixture(
        database_url: str, settings: config.Settings, frozen_clock: clock.FrozenClock
    ) -> AsyncIterator[container.Services]:
        async with services_with(
            database_url, settings, frozen_clock, *workflows, people=people, examples=examples
        ) as services:
            yield services

    fixture.__doc__ = doc
    return pytest.fixture(name=name)(fixture)


def api_fixtures(services_name: str) -> tuple[Any, Any]:
    """Fixtures ``api`` (an HTTP client of the app) and ``tokens`` (a bearer token per example
    principal) on the services fixture named ``services_name``: ``api, tokens = api_fixtures(
    "step_services")`` in a test module."""
    # pytest reads a fixture's arguments from its signature: this one names the services.
    wants = inspect.Signature([inspect.Parameter(services_name, inspect.Parameter.KEYWORD_ONLY)])

    async def api(**named: container.Services) -> AsyncIterator[httpx.AsyncClient]:
        async with asgi_client(named[services_name]) as http:
            yield http

    def tokens(**named: container.Services) -> dict[str, str]:
        return tokens_for(named[services_name])

    api.__signature__ = wants  # type: ignore[attr-defined]
    tokens.__signature__ = wants  # type: ignore[attr-defined]
    return pytest.fixture(name="api")(api), pytest.fixture(name="tokens")(tokens)


def app_with(name: str, workflows: Path) -> tuple[Any, Any, Any]:
    """Fixtures ``name`` (services with the examples and the test definitions ``workflows``),
    and ``api`` and ``tokens`` on them (:func:`api_fixtures`):
    ``versioned, api, tokens = app_with("versioned", HERE / "version_workflows.py")``."""
    services = services_fixture(
        name, workflows, doc=f"Services with the examples and ``{workflows.name}``."
    )
    return (services, *api_fixtures(name))


class GraphQLResult:
    """A GraphQL response: ``data``, ``errors`` and the HTTP status."""

    def __init__(self, response: httpx.Response) -> None:
        self.status = response.status_code
        self.body: dict[str, Any] = response.json()
        self.data: dict[str, Any] | None = self.body.get("data")
        self.errors: list[dict[str, Any]] = self.body.get("errors") or []

    @property
    def error_codes(self) -> list[str]:
        return [e.get("extensions", {}).get("code", "") for e in self.errors]

    def ok(self) -> dict[str, Any]:
        assert not self.errors, self.errors
        assert self.data is not None
        return self.data


async def gql(
    http: httpx.AsyncClient,
    query: str,
    variables: dict[str, Any] | None = None,
    *,
    token: str | None = None,
) -> GraphQLResult:
    """POST a GraphQL operation, as a frontend would."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    response = await http.post(
        "/graphql", json={"query": query, "variables": variables or {}}, headers=headers
    )
    return GraphQLResult(response)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Real processes and the browser are ``slow``: ``pytest -m "not slow"`` leaves them out."""
    for item in items:
        if "acceptance" in item.path.parts:
            item.add_marker(pytest.mark.slow)
