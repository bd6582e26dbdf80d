"""``taskflow webhooks listen``: a webhook receiver on this machine, to watch events arrive.

It serves a receiver on loopback, creates an endpoint pointing at it (as the principal
given: an admin, or a lead for their workflows), prints each delivery it verifies with
the endpoint's secret (``standardwebhooks``), and deletes the endpoint when it stops
(after ``--count`` events, ``--timeout`` seconds, or Ctrl-C). Loopback endpoints must be
allowed: they are in ``TASKFLOW_ENV=dev`` (the default), else set
``TASKFLOW_WEBHOOK_ALLOW_LOOPBACK=true`` for the server. The server's worker sends.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import socket
import sys
from typing import Any

import standardwebhooks
import uvicorn

from taskflow import errors
from taskflow.api import asgi
from taskflow.cli import runtime
from taskflow.config import config
from taskflow.service.access import principals
from taskflow.service.delivery import webhooks


class _Receiver:
    """Verifies and prints deliveries; counts the distinct events seen."""

    def __init__(self) -> None:
        self.secret = ""
        self.seen: set[str] = set()
        self.enough = asyncio.Event()
        self.count = 0

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        body = await asgi.read_body(receive)
        if body is None:
            return
        headers = {k.decode(): v.decode() for k, v in scope["headers"]}
        status = 204
        try:
            event = standardwebhooks.Webhook(self.secret).verify(body, headers)
        except Exception as exc:
            print(f"refused a delivery: {exc}", flush=True)
            status = 400
        else:
            msg = headers["webhook-id"]
            if msg not in self.seen:
                self.seen.add(msg)
                data = event["data"]
                subject = data["subject"]
                slot = f" slot {data['slot']['name']}" if data.get("slot") else ""
                print(
                    f"{event['type']:<18} {data['workflow']['name']} "
                    f"{subject['type']}/{subject['externalId']}{slot} ({msg}, verified)",
                    flush=True,
                )
                if self.count and len(self.seen) >= self.count:
                    self.enough.set()
        await send({"type": "http.response.start", "status": status, "headers": []})
        await send({"type": "http.response.body", "body": b""})


def _timed_out(seen: int, count: int, timeout: float) -> str:
    """Why ``listen`` stopped before ``--count`` events, and what to check."""
    got = "no event arrived" if not seen else f"only {seen} of {count} events arrived"
    return (
        f"taskflow webhooks listen: {got} in {timeout:g} s. Was a run started (a second "
        "startRun of the same subject is RunExists and sends nothing: use a new "
        "externalId)? Is a worker sending (taskflow serve runs one on the embedded "
        "database, else start taskflow worker)? Do --workflow and --event-type match the "
        "events? Is the principal of --as granted that workflow? Wait longer with --timeout."
    )


def listen(args: argparse.Namespace) -> int:
    """Serve a receiver on loopback and print the events it gets, verified."""
    settings = config.load()
    receiver = _Receiver()
    receiver.count = args.count
    with socket.socket() as s:
        s.bind(("127.0.0.1", args.port))
        port = s.getsockname()[1]
    url = f"http://127.0.0.1:{port}/taskflow"

    async def run(database: str) -> int:
        server = uvicorn.Server(
            uvicorn.Config(receiver, host="127.0.0.1", port=port, log_level="warning")
        )
        serving = asyncio.get_running_loop().create_task(server.serve())
        async with runtime.services(settings, database, apply_migrations=False) as svc:
            actor = await principals.get(svc, args.as_principal)
            if actor is None or not actor.active:
                runtime.fail(f"no active principal {args.as_principal!r}: load it first.")
                server.should_exit = True
                await serving
                return 1
            try:
                endpoint = await webhooks.create(
                    svc,
                    actor,
                    url=url,
                    description="taskflow webhooks listen",
                    event_types=args.event_type or [],
                    workflows=args.workflow or [],
                )
            except errors.TaskflowError as exc:
                runtime.fail(exc.message)
                server.should_exit = True
                await serving
                return 1
            row = await webhooks.get(svc, actor, endpoint)
            assert row is not None
            receiver.secret = row.secret
            print(f"listening on {url} (endpoint created as {actor.id})", flush=True)
            timed_out = False
            try:
                try:
                    await asyncio.wait_for(receiver.enough.wait(), args.timeout)
                except TimeoutError:
                    timed_out = True
            finally:
                await webhooks.delete(svc, actor, endpoint)
                server.should_exit = True
                await serving
        print(json.dumps({"events": len(receiver.seen)}), flush=True)
        if timed_out and args.count:
            # Waiting for events that never come looks like a hang: say what to check.
            print(_timed_out(len(receiver.seen), args.count, args.timeout), file=sys.stderr)
        return 0 if receiver.seen or not args.count else 1

    with runtime.database_url(settings) as database:
        return asyncio.run(run(database))


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("webhooks", help="Watch webhook deliveries arrive (listen).")
    commands = parser.add_subparsers(dest="webhooks_command", metavar="COMMAND", required=True)
    found = commands.add_parser(
        "listen", help="Receive this taskflow's events on loopback and print them, verified."
    )
    found.add_argument("--as", dest="as_principal", default="ada", help="Who creates the endpoint.")
    found.add_argument(
        "--workflow", action="append", help="Only this workflow's events (repeatable)."
    )
    found.add_argument(
        "--event-type", action="append", help="Only events of this type (repeatable)."
    )
    found.add_argument("--count", type=int, default=0, help="Stop after this many events.")
    found.add_argument("--timeout", type=float, default=300.0, help="Stop after these seconds.")
    found.add_argument("--port", type=int, default=0, help="The port (0: any free one).")
    found.set_defaults(handler=listen)
