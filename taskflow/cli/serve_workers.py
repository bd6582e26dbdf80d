"""``taskflow serve --workers N``: N server processes on one port, one embedded database.

The parent owns what is shared: it starts the embedded PostgreSQL (or takes the
configured URL), applies migrations once, prepares the metrics folder, and runs
uvicorn's process supervisor, which binds the port once and spawns N
processes. Each process builds the app through :func:`app` (an import-string
factory, as uvicorn requires for workers) with its own connection pools and,
on the embedded database, its own timer worker (each timer still fires once).
SIGTERM or SIGINT to the parent stops the processes, then PostgreSQL.

Metrics: every process writes its counters and histograms into the folder in
``PROMETHEUS_MULTIPROC_DIR`` (prometheus-client's multiprocess mode), so a
scrape answered by any process adds up all of them. Unset, the parent makes a
fresh folder and removes it at exit; set, its stale files are removed first.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from taskflow import logs
from taskflow.cli import runtime
from taskflow.config import config

#: How the parent tells its processes what it prepared (the URL, whether to fire timers).
URL_ENV = "TASKFLOW_SERVE_DATABASE_URL"
WORKER_ENV = "TASKFLOW_SERVE_WITH_WORKER"
MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"
#: The factory uvicorn imports in each process.
FACTORY = "taskflow.cli.serve_workers:app"


@contextlib.contextmanager
def metrics_folder() -> Iterator[str]:
    """The multiprocess metrics folder: the configured one emptied, or a fresh one."""
    configured = os.environ.get(MULTIPROC_ENV)
    if configured:
        folder = Path(configured)
        folder.mkdir(parents=True, exist_ok=True)
        for stale in folder.glob("*.db"):
            stale.unlink()
        yield str(folder)
        return
    made = tempfile.mkdtemp(prefix="taskflow-metrics-")
    try:
        yield made
    finally:
        shutil.rmtree(made, ignore_errors=True)


def run(
    settings: config.Settings,
    url: str,
    *,
    apply_migrations: bool,
    with_worker: bool,
    workers: int,
    uvicorn_options: dict[str, Any],
) -> None:
    """Serve with ``workers`` processes until a signal stops them (called by ``serve``)."""
    import uvicorn

    from taskflow.store.common import migrate

    if apply_migrations:
        asyncio.run(migrate.migrate(runtime.migration_url(settings, url)))
    with metrics_folder() as folder:
        os.environ[URL_ENV] = url
        os.environ[WORKER_ENV] = "1" if with_worker else "0"
        os.environ[MULTIPROC_ENV] = folder
        uvicorn.run(FACTORY, factory=True, workers=workers, **uvicorn_options)


def app() -> Any:
    """The app of one server process (uvicorn calls it in each process it spawns)."""
    from taskflow.cli import worker_cmd

    logs.configure()
    settings = config.load()
    url = os.environ[URL_ENV]
    with_worker = os.environ.get(WORKER_ENV) == "1"

    def provide() -> Any:
        return worker_cmd.services_with_worker(
            settings, url, apply_migrations=False, with_worker=with_worker
        )

    return runtime.app_for(settings, provide)
