"""Shared wiring for commands: settings, the database (embedded or not), services."""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from types import FrameType
from typing import Any, TypeVar

from taskflow import clock
from taskflow.config import config
from taskflow.service.clocks import calendar_reload
from taskflow.service.common import container
from taskflow.service.operate import clock_anchor
from taskflow.service.reports import replica_metrics
from taskflow.service.steps import step_guard
from taskflow.store.common import db, migrate


def exit_on_sigterm() -> None:
    """Turn SIGTERM into SystemExit so exit hooks (stopping PostgreSQL) run."""

    def _raise(signum: int, frame: FrameType | None) -> None:
        step_guard.PROCESS_STOPPING.set()  # not an action's failure, should one be running
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, _raise)


@contextlib.contextmanager
def database_url(settings: config.Settings) -> Iterator[str]:
    """The database to use: the configured URL, or the embedded server (started here)."""
    if settings.database_url is not None:
        yield settings.database_url
        return
    from taskflow.store.common import embedded

    config.check_data_dir(settings.data_dir)
    server = embedded.EmbeddedPostgres(settings.data_dir)
    try:
        yield server.url()
    finally:
        server.stop()


def migration_url(settings: config.Settings, url: str) -> str:
    """Where migrations run: the direct connection when the pool goes through a pooler
    (``TASKFLOW_DATABASE_LISTEN_URL``: DDL and Piccolo's own prepared statements want a
    session of their own), else ``url``."""
    return settings.database_listen_url or url


@contextlib.asynccontextmanager
async def services(
    settings: config.Settings,
    url: str,
    *,
    apply_migrations: bool,
    record_definitions: bool = False,
) -> AsyncIterator[container.Services]:
    """Open the pool (migrating first if asked) and build the services; with
    ``record_definitions`` (processes that serve work) check the loaded definitions
    against the deployed ones and record them (``service/versions/deployments.py``)."""
    if apply_migrations:
        await migrate.migrate(migration_url(settings, url))
    database = await db.Database.connect(
        url,
        min_size=settings.db_pool_min,
        max_size=settings.db_pool_max,
        statement_cache_size=settings.db_statement_cache_size,
        listen_url=settings.database_listen_url,
        listening=settings.scheduler == "listen",
        read_url=settings.database_read_url,
        read_max_lag=settings.database_read_max_lag,
    )
    try:
        replica_metrics.watch(database)
        built = container.build(database, settings, clock.AnchoredClock())
        await clock_anchor.anchor(built)
        anchoring = asyncio.get_running_loop().create_task(clock_anchor.keep_anchored(built))
        # A holiday feed's new copy or an edited calendar is served without a restart.
        watching = asyncio.get_running_loop().create_task(
            calendar_reload.Watch(built).keep_current(calendar_reload.every())
        )
        try:
            if record_definitions:
                from taskflow.service.versions import deployments

                await deployments.register(built)
            yield built
        finally:
            for task in (anchoring, watching):
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
    finally:
        await database.close()


T = TypeVar("T")


def on_services(
    settings: config.Settings,
    use: Callable[[container.Services], Awaitable[T]],
    *,
    record_definitions: bool = False,
) -> T:
    """What ``use`` answers, run once on the services over the configured database (migrated
    first when embedded) in an event loop of its own: a one-shot command's work."""

    async def go(url: str) -> T:
        async with services(
            settings,
            url,
            apply_migrations=settings.embedded,
            record_definitions=record_definitions,
        ) as svc:
            return await use(svc)

    with database_url(settings) as url:
        return asyncio.run(go(url))


def fail(message: str) -> int:
    print(f"taskflow: {message}", file=sys.stderr)
    return 1


def app_for(settings: config.Settings, provide: Any) -> Any:
    """The ASGI app ``serve`` runs (in one process or in each of ``--workers N``), with the
    settings' GraphQL introspection and input limits; ``provide`` builds its services."""
    from taskflow.api import app as api_app
    from taskflow.api import limits

    return api_app.create_app(
        provide,
        dev=settings.dev,
        introspection=settings.introspection,
        limits=limits.Limits.from_settings(settings),
    )
