"""Subscriptions at load: N open subscriptions on one server process, changes at a rate.

    python bench/live.py                          # 1 000 subscriptions, 100 changes/s, 20 s
    python bench/live.py --subscriptions 100 --seconds 5     # a smoke run
    python bench/live.py --writer other           # the mutations through a second process

One ``taskflow serve`` process (no worker) on its own database. Staff open
``--subscriptions`` ``slotChanged`` subscriptions (20 per connection, one slot each: the
slot pages people keep open) on as many slots; then a client claims and releases those
slots over HTTP at ``--rate`` changes per second. For each change the time from the
mutation's answer (which follows its commit) to the subscriber's message is kept; the
mutation's own time bounds the other side (the commit lies between send and answer).
Printed: p50/p99 delivery, the server's resident memory per subscription (RSS after the
subscriptions were opened less before, over their number), and beside it a raw baseline:
a bare WebSocket server that LISTENs on the same channel and forwards each notification
to its sockets, as fast as delivery can be without reading anything.

``--writer other`` sends the mutations to a second ``taskflow serve`` process on the same
database: the subscriptions' process then only delivers (as behind a load balancer, where
any process may make the change), so its figure is the live path's own cost rather than
that of the mutations it would also serve.
"""

# ruff: noqa: E402 (the imports follow the path set-up below)
from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

_HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _HERE]
ROOT = _HERE.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import asyncpg
import httpx
import psutil
from websockets.asyncio.client import ClientConnection, connect

from bench import pg
from taskflow import clock
from taskflow.config import config
from taskflow.service.access import principals
from taskflow.service.common import container
from taskflow.store.common import db, migrate
from taskflow.store.live import live

SECRET = "bench-live-signing-key-not-for-production-0123456789"
PER_CONNECTION = 20
#: Concurrent clients sending the mutations (as bench/inbox.py's claimers).
CLIENTS = 8
WATCHERS = ("fiona", "frank", "max")
START = """mutation($input: StartRunInput!) { startRun(input: $input) {
  ... on StartRunSuccess { run { slots { id } } } } }"""
CLAIM = "mutation($id: ID!) { claim(input: {slotId: $id}) { __typename } }"
RELEASE = "mutation($id: ID!) { release(input: {slotId: $id}) { __typename } }"
WATCH = "subscription($id: ID!) { slotChanged(id: $id) { cursor slotId slot { status } } }"


def ms(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return 1000 * ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else 0.0


def settings_for(url: str) -> config.Settings:
    return config.load(
        {
            "TASKFLOW_DATABASE_URL": url,
            "TASKFLOW_SECRET_KEYS": SECRET,
            "TASKFLOW_DATA_DIR": "/tmp/taskflow-bench-live-unused",
            "TASKFLOW_ENV": "prod",
        }
    )


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start(command: list[str], env: dict[str, str], log: Path, base: str) -> subprocess.Popen[bytes]:
    with log.open("ab") as sink:
        process = subprocess.Popen(
            command, env=env, cwd=ROOT, stdout=sink, stderr=subprocess.STDOUT
        )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"{command[2]} exited; see {log}")
        try:
            if httpx.get(f"{base}/health", timeout=1).status_code == 200:
                return process
        except httpx.HTTPError:
            time.sleep(0.2)
    process.kill()
    raise SystemExit(f"{command[2]} did not answer; see {log}")


async def prepare(admin_url: str, name: str) -> tuple[str, dict[str, str]]:
    """A fresh database with the example people; its URL and a token per person used."""
    url = db.with_database(admin_url, name)
    admin = await asyncpg.connect(admin_url)
    try:
        await admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        await admin.execute(f"CREATE DATABASE {name}")
    finally:
        await admin.close()
    await migrate.migrate(url)
    people = json.loads((ROOT / "examples" / "principals.json").read_text())
    database = await db.Database.connect(url, min_size=1, max_size=2)
    try:
        services = container.build(database, settings_for(url), clock.SystemClock())
        await principals.load(services, people)
        now = services.clock.now()
        tokens = {p: services.staff_tokens.mint(p, now) for p in ("app", "leah", *WATCHERS)}
    finally:
        await database.close()
    return url, tokens


async def gql(http: httpx.AsyncClient, token: str, query: str, **variables: Any) -> dict[str, Any]:
    answer = await http.post(
        "/graphql",
        json={"query": query, "variables": variables},
        headers={"Authorization": f"Bearer {token}"},
    )
    body: dict[str, Any] = answer.json()
    if body.get("errors"):
        raise SystemExit(f"GraphQL refused: {body['errors']}")
    return dict(body["data"])


async def open_slots(
    http: httpx.AsyncClient, token: str, count: int, prefix: str = "B"
) -> list[str]:
    attributes = {"amount": 100.0, "currency": "GBP", "submitted_by": "sid",
                  "department": "sales", "receipts": 1}  # fmt: skip
    found = []
    for i in range(count):
        subject = {
            "type": "expense",
            "externalId": f"{prefix}-{i}",
            "attributes": {**attributes, "reference": f"{prefix}-{i}"},
        }
        run = await gql(
            http, token, START, input={"workflow": "expense-approval", "subject": subject}
        )
        found.append(run["startRun"]["run"]["slots"][0]["id"])
    return found


class Clients:
    """The subscribers: sockets, and when each slot's change arrived."""

    def __init__(self) -> None:
        self.sockets: list[ClientConnection] = []
        self.arrived: dict[str, list[float]] = {}
        self.readers: list[asyncio.Task[None]] = []

    async def read(self, socket: ClientConnection, raw: str = "raw") -> None:
        async for text in socket:
            now = time.perf_counter()
            message = json.loads(text)
            if message.get("type") == "next":
                key = message["payload"]["data"]["slotChanged"]["slotId"]
                self.arrived.setdefault(key, []).append(now)
            elif message.get("type") == "raw":
                self.arrived.setdefault(raw, []).append(now)

    async def close(self) -> None:
        for task in self.readers:
            task.cancel()
        for socket in self.sockets:
            await socket.close()


async def subscribe_all(ws_url: str, tokens: dict[str, str], slots: list[str], n: int) -> Clients:
    clients = Clients()
    for first in range(0, n, PER_CONNECTION):
        who = WATCHERS[(first // PER_CONNECTION) % len(WATCHERS)]
        socket = await connect(ws_url, subprotocols=["graphql-transport-ws"], max_queue=None)  # type: ignore[list-item]
        await socket.send(
            json.dumps(
                {"type": "connection_init", "payload": {"Authorization": f"Bearer {tokens[who]}"}}
            )
        )
        assert json.loads(await socket.recv())["type"] == "connection_ack"
        for i in range(first, min(n, first + PER_CONNECTION)):
            payload = {"query": WATCH, "variables": {"id": slots[i % len(slots)]}}
            await socket.send(json.dumps({"id": str(i), "type": "subscribe", "payload": payload}))
        clients.sockets.append(socket)
        clients.readers.append(asyncio.create_task(clients.read(socket)))
    return clients


async def drive(
    http: httpx.AsyncClient, token: str, slots: list[str], rate: float, seconds: float
) -> list[tuple[str, float, float]]:
    """Claim and release ``slots`` in turn at ``rate``, each mutation sent at its instant by
    one of ``CLIENTS`` concurrent clients (a late one is sent at once): (slot, sent,
    answered) per change that changed something, in sending order."""
    changes: list[tuple[str, float, float]] = []
    started = time.perf_counter()
    total = int(rate * seconds)
    turns = iter(range(total))

    async def client() -> None:
        for k in turns:
            await asyncio.sleep(max(0.0, started + k / rate - time.perf_counter()))
            slot = slots[k % len(slots)]
            sent = time.perf_counter()
            # A slot comes round every len(slots) / rate seconds: claimed, then released.
            verb = RELEASE if (k // len(slots)) % 2 else CLAIM
            answer = await gql(http, token, verb, id=slot)
            if next(iter(answer.values()))["__typename"] == "SlotSuccess":
                changes.append((slot, sent, time.perf_counter()))

    await asyncio.gather(*(client() for _ in range(CLIENTS)))
    await asyncio.sleep(1.0)
    return sorted(changes, key=lambda c: c[1])


def latencies(
    changes: list[tuple[str, float, float]],
    arrived: dict[str, list[float]],
    watchers: Callable[[str], int],
) -> tuple[list[float], list[float]]:
    """Per change, its first ``watchers(slot)`` messages before the slot's next change: their
    delay from the mutation's answer (0 when earlier) and from its send."""
    after_answer, after_send = [], []
    for k, (slot, sent, answered) in enumerate(changes):
        until = next((c[1] for c in changes[k + 1 :] if c[0] == slot), float("inf"))
        times = [t for t in arrived.get(slot, []) if sent <= t < until][: watchers(slot)]
        after_answer.extend(max(0.0, t - answered) for t in times)
        after_send.extend(t - sent for t in times)
    return after_answer, after_send


async def echo_server(url: str, port: int) -> None:
    """The raw baseline: LISTEN, and forward each notification to every socket."""
    from websockets.asyncio.server import ServerConnection, broadcast, serve

    sockets: set[ServerConnection] = set()

    async def handler(socket: ServerConnection) -> None:
        sockets.add(socket)
        try:
            await socket.wait_closed()
        finally:
            sockets.discard(socket)

    conn = await asyncpg.connect(url)
    await conn.add_listener(
        live.CHANNEL, lambda *a: broadcast(sockets, json.dumps({"type": "raw", "payload": a[3]}))
    )

    async def health(connection: Any, request: Any) -> Any:
        if request.path == "/health":
            return connection.respond(200, "ok\n")
        return None

    async with serve(handler, "127.0.0.1", port, process_request=health):
        await asyncio.Future()


async def measure(admin_url: str, options: argparse.Namespace, out: Callable[[str], None]) -> None:
    slots_wanted = max(1, min(options.subscriptions, options.slots))
    url, tokens = await prepare(admin_url, options.database)
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    env = {**os.environ, "TASKFLOW_DATABASE_URL": url, "TASKFLOW_SECRET_KEYS": SECRET,
           "TASKFLOW_DATA_DIR": "/tmp/taskflow-bench-live-unused", "TASKFLOW_ENV": "prod",
           "TASKFLOW_PORT": str(port), "TASKFLOW_LIVE_MAX_CONNECTIONS": "10000",
           "TASKFLOW_LIVE_MAX_QUEUED": "100000"}  # fmt: skip
    env.pop("PROMETHEUS_MULTIPROC_DIR", None)
    log = Path("/tmp/taskflow-bench-live.log")
    server = start([sys.executable, "-m", "taskflow", "serve", "--no-with-worker"], env, log, base)
    writer, writes = None, base
    try:
        if options.writer == "other":
            writer_port = free_port()
            writes = f"http://127.0.0.1:{writer_port}"
            command = [sys.executable, "-m", "taskflow", "serve", "--no-with-worker"]
            writer = start(command, {**env, "TASKFLOW_PORT": str(writer_port)}, log, writes)
        async with httpx.AsyncClient(base_url=writes, timeout=30) as http:
            slots = await open_slots(http, tokens["app"], slots_wanted)
            process = psutil.Process(server.pid)
            rss_before = process.memory_info().rss
            clients = await subscribe_all(
                f"ws://127.0.0.1:{port}/graphql", tokens, slots, options.subscriptions
            )
            await asyncio.sleep(2.0)  # every subscribe message handled
            rss_after = process.memory_info().rss
            # Warm up: every slot claimed and released once (each group's first read, the
            # pool's fresh connections preparing their statements), not measured.
            await drive(http, tokens["leah"], slots, options.rate, 2 * len(slots) / options.rate)
            clients.arrived.clear()
            changes = await drive(http, tokens["leah"], slots, options.rate, options.seconds)
            await clients.close()
        n = options.subscriptions
        watching = [slots[i % len(slots)] for i in range(n)]
        answer, send = latencies(changes, clients.arrived, watching.count)
        per = (rss_after - rss_before) / options.subscriptions
        out(
            f"taskflow (mutations on the {options.writer} process): "
            f"{n} subscriptions on {len(clients.sockets)} connections, "
            f"{options.rate:g} changes/s asked for {options.seconds:g} s, "
            f"{len(changes) / (changes[-1][2] - changes[0][1]):.0f}/s made: {len(answer)} messages"
        )
        out(
            f"taskflow: commit to delivery p50 {ms(answer, 0.5):.1f} ms, "
            f"p99 {ms(answer, 0.99):.1f} ms (from the mutation's send: p99 {ms(send, 0.99):.1f} ms)"
        )
        out(
            f"taskflow: memory per subscription {per / 1024:.1f} KiB "
            f"(RSS {rss_before / 2**20:.0f} -> {rss_after / 2**20:.0f} MiB)"
        )
    finally:
        for process in (server, writer):
            if process is not None:
                process.send_signal(signal.SIGTERM)
                process.wait(timeout=60)
    await baseline(url, tokens, options, out)


async def baseline(
    url: str, tokens: dict[str, str], options: argparse.Namespace, out: Callable[[str], None]
) -> None:
    """The same changes through a bare LISTEN-to-WebSocket forwarder (one socket per 20)."""
    echo_port, port = free_port(), free_port()
    env = {**os.environ, "TASKFLOW_DATABASE_URL": url, "TASKFLOW_SECRET_KEYS": SECRET,
           "TASKFLOW_DATA_DIR": "/tmp/taskflow-bench-live-unused", "TASKFLOW_ENV": "prod",
           "TASKFLOW_PORT": str(port)}  # fmt: skip
    log = Path("/tmp/taskflow-bench-live.log")
    echo = start([sys.executable, __file__, "--echo", url, "--port", str(echo_port)], env, log,
                 f"http://127.0.0.1:{echo_port}")  # fmt: skip
    server = start([sys.executable, "-m", "taskflow", "serve", "--no-with-worker"], env, log,
                   f"http://127.0.0.1:{port}")  # fmt: skip
    try:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=30) as http:
            clients = Clients()
            for n in range(0, options.subscriptions, PER_CONNECTION):
                socket = await connect(f"ws://127.0.0.1:{echo_port}/", max_queue=None)
                clients.sockets.append(socket)
                clients.readers.append(asyncio.create_task(clients.read(socket, f"raw:{n}")))
            slots = await open_slots(http, tokens["app"], options.baseline_slots, "RAW")
            await drive(http, tokens["leah"], slots, options.rate, 2 * len(slots) / options.rate)
            clients.arrived.clear()
            changes = await drive(http, tokens["leah"], slots, options.rate, options.seconds)
            await clients.close()
        # One notification per change, forwarded to every socket in commit order: the k-th
        # a socket received is matched with the k-th answered change.
        answered = sorted(c[2] for c in changes)
        answer = []
        for times in clients.arrived.values():
            answer.extend(max(0.0, t - a) for t, a in zip(sorted(times), answered, strict=False))
        sockets = len(clients.sockets)
        out(
            f"raw LISTEN -> WebSocket echo ({sockets} sockets): p50 {ms(answer, 0.5):.1f} ms, "
            f"p99 {ms(answer, 0.99):.1f} ms over {len(answer)} messages"
        )
    finally:
        for process in (server, echo):
            process.send_signal(signal.SIGTERM)
            process.wait(timeout=60)


async def run(admin_url: str, options: argparse.Namespace, out: Callable[[str], None]) -> None:
    await measure(admin_url, options, out)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--subscriptions", type=int, default=1000)
    parser.add_argument("--slots", type=int, default=200, help="slots watched (round robin)")
    parser.add_argument("--rate", type=float, default=100.0, help="changes per second")
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--baseline-slots", type=int, default=20, help="slots the baseline moves")
    parser.add_argument(
        "--writer",
        choices=("same", "other"),
        default="same",
        help="the process the mutations go to: the subscriptions' own, or a second one",
    )
    parser.add_argument("--database", default="bench_live", help=argparse.SUPPRESS)
    parser.add_argument(
        "--data-dir", default="/tmp/taskflow-bench-live", help="embedded PostgreSQL"
    )
    parser.add_argument("--admin-url", default=None, help="an external PostgreSQL instead")
    parser.add_argument("--echo", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, default=0, help=argparse.SUPPRESS)
    options = parser.parse_args(argv)
    if options.echo:
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
        asyncio.run(echo_server(options.echo, options.port))
        return
    print(f"taskflow live benchmark: {os.cpu_count()} CPUs")
    pg.serve_postgres(options.admin_url, options.data_dir, lambda url: run(url, options, print))


if __name__ == "__main__":
    main()
