"""``taskflow serve``, ``taskflow migrate``, ``taskflow export-schema``."""

from __future__ import annotations

import argparse
import asyncio
import errno
import socket
from pathlib import Path
from typing import Any

from taskflow import errors, logs
from taskflow.cli import runtime
from taskflow.config import config

DEFAULT_SCHEMA_PATH = config.PROJECT_ROOT / "graphql" / "schema.graphql"


def serve(args: argparse.Namespace) -> int:
    import uvicorn

    settings = config.load()
    runtime.exit_on_sigterm()
    logs.configure()
    host = args.host or settings.host
    port = args.port or settings.port
    # Before the database starts and before "serving on" is printed: a port that is taken
    # is one clear line, not a claim to serve followed by uvicorn's traceback-like exit.
    _check_port(host, port)
    with runtime.database_url(settings) as url:
        # The embedded database is ours to keep current; an external one is migrated
        # deliberately by an operator (taskflow migrate), unless --migrate is given.
        apply = settings.embedded or args.migrate
        # Refuse drifted or missing definitions here, as one clear error, before uvicorn
        # starts (the app's lifespan records them again, which changes nothing).
        asyncio.run(_record(settings, url, apply))

        # The embedded database means one machine: fire timers here unless told otherwise.
        with_worker = settings.embedded if args.with_worker is None else args.with_worker

        def provide() -> Any:
            from taskflow.cli import worker_cmd

            return worker_cmd.services_with_worker(
                settings, url, apply_migrations=apply, with_worker=with_worker
            )

        # uvicorn believes X-Forwarded-For from 127.0.0.1 unless told otherwise; the
        # magic-link throttle keys by client address, so only configured proxies count.
        trusted = list(settings.trusted_proxies)
        options: dict[str, Any] = {
            "host": host,
            "port": port,
            "log_level": "info",
            "access_log": False,  # taskflow's own access line has the request id and outcome
            "log_config": logs.uvicorn_config(),
            "proxy_headers": bool(trusted),
            "forwarded_allow_ips": trusted or None,
        }
        if args.workers > 1:
            from taskflow.cli import serve_workers

            print(
                f"taskflow: serving on http://{host}:{port} with {args.workers} processes "
                "(GraphQL at /graphql)",
                flush=True,
            )
            serve_workers.run(
                settings,
                url,
                apply_migrations=apply,
                with_worker=with_worker,
                workers=args.workers,
                uvicorn_options=options,
            )
            return 0
        application = runtime.app_for(settings, provide)
        print(f"taskflow: serving on http://{host}:{port} (GraphQL at /graphql)", flush=True)
        uvicorn.run(application, **options)
    return 0


def _check_port(host: str, port: int) -> None:
    """:class:`errors.ConfigError` unless this process could listen on ``host:port`` now
    (bound as uvicorn binds it, with ``SO_REUSEADDR``, and released at once)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                raise errors.ConfigError(
                    f"Port {port} on {host} is taken (another taskflow serve, or another "
                    "program): stop that one, or serve on another port with --port or "
                    "TASKFLOW_PORT."
                ) from None
            raise errors.ConfigError(
                f"Cannot listen on {host}:{port} ({exc.strerror or exc}): check --host / "
                "TASKFLOW_HOST and --port / TASKFLOW_PORT (ports below 1024 need privileges)."
            ) from None


async def _record(settings: config.Settings, url: str, apply_migrations: bool) -> None:
    async with runtime.services(
        settings, url, apply_migrations=apply_migrations, record_definitions=True
    ):
        pass


def _workers(text: str) -> int:
    try:
        count = int(text)
    except ValueError:
        count = 0
    if not 1 <= count <= 64:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a number of processes: write a whole number from 1 to 64, "
            "e.g. the number of CPU cores."
        )
    return count


def migrate(args: argparse.Namespace) -> int:
    from taskflow.store.common import migrate as store_migrate

    settings = config.load()
    logs.configure()
    with runtime.database_url(settings) as url:
        asyncio.run(store_migrate.migrate(runtime.migration_url(settings, url), quiet=False))
        print("taskflow: the database is up to date.")
        # The definitions this deploy brings are checked against the deployed ones now,
        # before any server or worker starts on them.
        asyncio.run(_record(settings, url, False))
    print("taskflow: the workflow definitions are recorded (taskflow definitions lists them).")
    return 0


def export_schema(args: argparse.Namespace) -> int:
    from taskflow.api.graphql import schema

    target = Path(args.output)
    target.write_text(schema.printed_schema())
    print(f"taskflow: wrote {target}")
    return 0


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "serve", help="Run the API server (and migrate the embedded database)."
    )
    parser.add_argument("--host", help="Interface to bind (default TASKFLOW_HOST or 127.0.0.1).")
    parser.add_argument("--port", type=int, help="Port (default TASKFLOW_PORT or 8000).")
    parser.add_argument(
        "--migrate", action="store_true", help="Apply migrations to an external database first."
    )
    parser.add_argument(
        "--workers",
        type=_workers,
        default=1,
        help="Server processes sharing the port, each with its own pool (default 1); "
        "the embedded database is started once.",
    )
    parser.add_argument(
        "--with-worker",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="Run a timer worker in-process (default: yes on the embedded database).",
    )
    parser.set_defaults(handler=serve)

    parser = subparsers.add_parser("migrate", help="Apply database migrations.")
    parser.set_defaults(handler=migrate)

    parser = subparsers.add_parser(
        "export-schema", help="Write the GraphQL schema (SDL) to graphql/schema.graphql."
    )
    parser.add_argument("--output", default=str(DEFAULT_SCHEMA_PATH), help="Where to write it.")
    parser.set_defaults(handler=export_schema)
