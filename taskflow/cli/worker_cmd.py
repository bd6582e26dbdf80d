"""``taskflow worker``: fire due reminders, escalations, breaches and timeouts."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
from collections.abc import AsyncIterator
from typing import Any

from taskflow import logs
from taskflow.cli import runtime
from taskflow.config import config
from taskflow.service.common import container


def worker(args: argparse.Namespace) -> int:
    settings = config.load()
    runtime.exit_on_sigterm()
    logs.configure()
    with runtime.database_url(settings) as url, contextlib.suppress(KeyboardInterrupt):
        asyncio.run(_work(settings, url, args.batch, args.poll))
    return 0


async def _work(settings: config.Settings, url: str, batch: int, poll: float | None) -> None:
    from taskflow.worker import loop

    async with runtime.services(
        settings, url, apply_migrations=settings.embedded, record_definitions=True
    ) as services:
        worker = loop.Worker(services, batch=batch, poll=poll)
        # What was loaded to get here (modules, definitions, calendars) lives as long as the
        # process: out of the collector's sight, its full passes stay short (a batch of
        # steps allocates enough to run them often).
        gc.freeze()
        mail = settings.mail
        sends = f"; e-mail via {mail.host}:{mail.port}" if mail is not None else ""
        print(
            f"taskflow: worker started (batch {batch}, scheduler {worker.scheduler}, "
            f"poll {worker.poll}s{sends})",
            flush=True,
        )
        await worker.run()


@contextlib.asynccontextmanager
async def services_with_worker(
    settings: config.Settings, url: str, *, apply_migrations: bool, with_worker: bool
) -> AsyncIterator[container.Services]:
    """The services of ``serve``, with one in-process worker when asked."""
    from taskflow.worker import loop

    async with runtime.services(
        settings, url, apply_migrations=apply_migrations, record_definitions=True
    ) as services:
        if not with_worker:
            yield services
            return
        async with loop.running(services):
            yield services


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "worker", help="Fire due timers (reminders, escalations, breaches, timeouts)."
    )
    parser.add_argument("--batch", type=int, default=100, help="Timers per transaction.")
    parser.add_argument(
        "--poll",
        type=float,
        default=None,
        help="Seconds between polls (at most 1 with TASKFLOW_SCHEDULER=listen; default "
        "TASKFLOW_SCHEDULER_POLL_SECONDS with poll).",
    )
    parser.set_defaults(handler=worker)
