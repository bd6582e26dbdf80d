"""Where a ``claimNext`` (and an inbox) request's time goes in the server process.

    python bench/claim_profile.py --data-dir /tmp/bench-inbox-claimperf [--calls 300]

Needs the database a ``bench/inbox.py`` run kept (``bench_inbox`` on the same embedded
data dir, any scale). Starts the bench server process of ``bench/inbox.py`` with this file
as its ``--try`` file: in the server it wraps the ASGI app and a few functions of the hot
path with ``time.perf_counter_ns`` spans and runs cProfile during the measured requests.
The client sends ``claimNext`` (each claim released at the end) and the GraphQL inbox,
one request at a time, and prints what the server measured:

- per request: wall time inside the ASGI app, the server thread's CPU time inside it,
  and the whole process's CPU time per request over the phase (uvicorn's HTTP parsing
  and writing, the event loop and asyncpg's protocol included);
- spans (wall, so database waits included where a span awaits one);
- the functions with the most own time (cProfile ``tottime``) and cumulative time.

``--try FILE`` applies a patch in both processes first (as in ``bench/inbox.py``).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import cProfile
import functools
import importlib.util
import io
import json
import os
import pstats
import random
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

OUT_ENV = "TASKFLOW_CLAIM_PROFILE_OUT"
HERE = Path(__file__).resolve()
PHASE_HEADER = b"x-profile-phase"
TRY_ENV = "TASKFLOW_CLAIM_PROFILE_TRY"


# -- the server side (run as the bench server's --try file) ----------------------------------------


class Recorder:
    """Per phase: request wall and CPU inside the app, spans, process CPU, a profile."""

    def __init__(self) -> None:
        self.phase: str | None = None
        self.requests: dict[str, list[tuple[int, int]]] = defaultdict(list)
        self.spans: dict[str, dict[str, list[tuple[int, int]]]] = defaultdict(
            lambda: defaultdict(list)
        )
        self.process: dict[str, list[int]] = {}
        self.profiles: dict[str, cProfile.Profile] = {}

    def span(self, name: str, wall: int, cpu: int) -> None:
        if self.phase is not None:
            self.spans[self.phase][name].append((wall, cpu))

    def dump(self, path: str) -> None:
        report: dict[str, Any] = {"phases": {}}
        for phase, calls in self.requests.items():
            first, last = self.process.get(phase, [0, 0])
            stream = io.StringIO()
            profile = self.profiles.get(phase)
            if profile is not None:
                if os.environ.get("TASKFLOW_CLAIM_PROFILE_KEEP"):
                    profile.dump_stats(f"{os.environ['TASKFLOW_CLAIM_PROFILE_KEEP']}.{phase}")
                stats = pstats.Stats(profile, stream=stream)
                stats.sort_stats("tottime").print_stats(35)
                stats.sort_stats("cumulative").print_stats(45)
            report["phases"][phase] = {
                "requests": len(calls),
                "wall_us": [w / 1000 for w, _ in calls],
                "cpu_us": [c / 1000 for _, c in calls],
                "process_cpu_us_per_request": (last - first) / 1000 / max(1, len(calls)),
                "spans": {
                    k: [[w / 1000 for w, _ in vs], [c / 1000 for _, c in vs]]
                    for k, vs in self.spans[phase].items()
                },
                "profile": stream.getvalue(),
            }
        Path(path).write_text(json.dumps(report))


RECORDER = Recorder()


def _phase_of(scope: Any) -> str | None:
    for name, value in scope.get("headers") or ():
        if name == PHASE_HEADER:
            return str(value.decode())
    return None


def _measured(app: Any, profile: bool) -> Any:
    async def measured(scope: Any, receive: Any, send: Any) -> None:
        phase = _phase_of(scope) if scope.get("type") == "http" else None
        if phase is None:
            await app(scope, receive, send)
            return
        RECORDER.phase = phase
        if phase not in RECORDER.process:
            RECORDER.process[phase] = [time.process_time_ns(), 0]
        # Thread CPU time, not wall: a loaded machine's preemption lands on no function.
        profiler = None
        if profile:
            profiler = RECORDER.profiles.setdefault(phase, cProfile.Profile(time.thread_time))
        wall, cpu = time.perf_counter_ns(), time.thread_time_ns()
        if profiler is not None:
            profiler.enable()
        try:
            await app(scope, receive, send)
        finally:
            if profiler is not None:
                profiler.disable()
            RECORDER.requests[phase].append(
                (time.perf_counter_ns() - wall, time.thread_time_ns() - cpu)
            )
            RECORDER.process[phase][1] = time.process_time_ns()
            RECORDER.phase = None

    return measured


def _spanned(name: str, target: Callable[..., Any]) -> Callable[..., Any]:
    if asyncio.iscoroutinefunction(target):

        @functools.wraps(target)
        async def spanned_async(*args: Any, **kwargs: Any) -> Any:
            started, cpu = time.perf_counter_ns(), time.thread_time_ns()
            try:
                return await target(*args, **kwargs)
            finally:
                RECORDER.span(name, time.perf_counter_ns() - started, time.thread_time_ns() - cpu)

        return spanned_async

    @functools.wraps(target)
    def spanned(*args: Any, **kwargs: Any) -> Any:
        started, cpu = time.perf_counter_ns(), time.thread_time_ns()
        try:
            return target(*args, **kwargs)
        finally:
            RECORDER.span(name, time.perf_counter_ns() - started, time.thread_time_ns() - cpu)

    return spanned


def instrument_server(profile: bool) -> None:
    """Wrap the hot path's layers with spans (module attributes looked up at call time)."""
    import atexit

    from taskflow.api import app as api_app
    from taskflow.api import body_guard
    from taskflow.api.graphql.common import guards, keyed
    from taskflow.api.graphql.slots import work_answers
    from taskflow.service.access import principals as principal_service
    from taskflow.service.slots import slots as slot_service
    from taskflow.store.access import principals as principal_rows
    from taskflow.store.slots import claims

    body_guard.check_body = _spanned("body_guard.check_body", body_guard.check_body)
    api_app._context_of = _spanned("context getter", api_app._context_of)
    principal_service.authenticate = _spanned(
        "service.principals.authenticate", principal_service.authenticate
    )
    principal_rows.get = _spanned("  store principal row (SELECT)", principal_rows.get)
    guards.QuietSchema.execute = _spanned(  # type: ignore[method-assign]
        "strawberry Schema.execute (parse..result)", guards.QuietSchema.execute
    )
    keyed.once = _spanned("keyed.once (idempotency + work)", keyed.once)
    slot_service.claim_next = _spanned("service.slots.claim_next", slot_service.claim_next)
    claims.claim_next_plain = _spanned(
        "  store claim_next_plain (the statement)", claims.claim_next_plain
    )
    # slot_success holds slot_now itself; slot_now looks resolve_slot up at call time.
    work_answers.resolve_slot = _spanned(
        "the payload's slot (resolve_slot)", work_answers.resolve_slot
    )
    create = api_app.create_app

    def create_app(*args: Any, **kwargs: Any) -> Any:
        built = create(*args, **kwargs)
        built.asgi_handler = _measured(built.asgi_handler, profile)
        return built

    api_app.create_app = create_app  # type: ignore[assignment]
    out = os.environ[OUT_ENV]
    atexit.register(RECORDER.dump, out)


if __name__ == "bench_try":
    if "--serve" in sys.argv:
        instrument_server(profile=os.environ.get("TASKFLOW_CLAIM_PROFILE_CPROFILE", "1") == "1")
    extra = os.environ.get(TRY_ENV)
    if extra:
        import runpy

        runpy.run_path(extra, run_name="bench_try")


# -- the client --------------------------------------------------------------------------------


def load_inbox(folder: Path, name: str) -> Any:
    """``folder/inbox.py`` as a module (a bench folder of this or another checkout)."""
    spec = importlib.util.spec_from_file_location(name, folder / "inbox.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


@dataclass
class Served:
    """One server under measurement: its label, bench module, report file and client."""

    label: str
    inbox: Any
    out: str
    http: Any = None


async def world_of(inbox: Any, url: str, database: Any, *, seed: int) -> Any:
    """``inbox.World`` on the kept database: every principal, its keys, the raw statement."""
    from taskflow import clock
    from taskflow.core.definition import audience as au
    from taskflow.service.common import container
    from taskflow.store.access import principals as principal_rows

    services = container.build(database, inbox.settings_for(url), clock.SystemClock())
    async with database.connection() as conn:
        ids = [r["id"] for r in await conn.fetch("SELECT id FROM principal ORDER BY id")]
        loaded = await principal_rows.get_many(conn, ids)
    people = [loaded[i] for i in ids]
    return inbox.World(
        services=services,
        url=url,
        principals=people,
        keys={p.id: sorted(au.principal_keys(p)) for p in people},
        claim_sql=await inbox.claim_statement(),
        rng=random.Random(seed),
    )


async def drive(inbox: Any, url: str, calls: int, served: list[Served]) -> None:
    """Warm up, then send each phase's requests to every server in turn, one at a time
    (servers measured side by side share the machine's noise alike)."""
    import asyncpg
    import httpx

    from taskflow.api.graphql.common import relay
    from taskflow.store.common import db

    database = await db.Database.connect(url, min_size=1, max_size=2)
    admin = await asyncpg.connect(url)
    try:
        await admin.execute("VACUUM (ANALYZE) slot")
        world = await world_of(inbox, url, database, seed=7)
        with contextlib.ExitStack() as stack:
            for one in served:
                os.environ[OUT_ENV] = one.out
                try_file = str(Path(one.inbox.__file__).with_name("claim_profile.py"))
                base, _ = stack.enter_context(one.inbox.server(url, try_file))
                one.http = httpx.AsyncClient(base_url=base, timeout=60)
            try:
                await _phases(world, inbox, served, calls, relay.from_global_id)
            finally:
                for one in served:
                    await one.http.aclose()
    finally:
        await admin.close()
        await database.close()


async def _phases(
    world: Any, inbox: Any, served: list[Served], calls: int, local: Callable[..., Any]
) -> None:
    taken: list[str] = []
    # Every principal has been seen once, as by a frontend's first request of a session.
    for actor in world.principals:
        for one in served:
            headers = {"Authorization": f"Bearer {world.token(actor)}"}
            await one.http.post("/graphql", json={"query": "{ me { login } }"}, headers=headers)
    for phase, n in (("warmup", 40), ("claim", calls)):
        for _ in range(n):
            for one in served:
                actor = world.rng.choice(world.principals)
                headers = {
                    "Authorization": f"Bearer {world.token(actor)}",
                    "x-profile-phase": phase,
                }
                answer = await one.http.post(
                    "/graphql", json={"query": inbox.CLAIM_NEXT_MUTATION}, headers=headers
                )
                result = answer.json()["data"]["claimNext"]
                if result["__typename"] == "SlotSuccess":
                    taken.append(local(result["slot"]["id"])[1])
    async with world.services.db.connection() as conn:
        await inbox.release(conn, taken)
    body = {"query": inbox.INBOX_QUERY, "variables": {"first": inbox.PAGE}}
    for _ in range(calls):
        for one in served:
            actor = world.rng.choice(world.principals)
            headers = {"Authorization": f"Bearer {world.token(actor)}", "x-profile-phase": "inbox"}
            assert (await one.http.post("/graphql", json=body, headers=headers)).is_success
    for _ in range(calls):
        for one in served:
            await one.http.get("/plain/ping", headers={"x-profile-phase": "ping"})


def _summary(values: list[float]) -> str:
    if not values:
        return "-"
    ordered = sorted(values)
    return f"p50 {statistics.median(ordered):6.0f} mean {statistics.fmean(ordered):6.0f}"


def report(path: str, show_profile: bool) -> None:
    data = json.loads(Path(path).read_text())
    for phase, found in data["phases"].items():
        if phase == "warmup":
            continue
        print(f"\n== {phase}: {found['requests']} requests (µs)")
        print(f"{'wall in the ASGI app':44s} {_summary(found['wall_us'])}")
        print(f"{'server thread CPU in the ASGI app':44s} {_summary(found['cpu_us'])}")
        print(
            f"{'process CPU per request (whole phase)':44s} "
            f"{found['process_cpu_us_per_request']:8.0f}"
        )
        print("spans: wall (database waits included) | the server thread's CPU")
        for name, (walls, cpus) in found["spans"].items():
            print(f"{name:44s} {_summary(walls)} | cpu {_summary(cpus)}")
        if show_profile:
            print(found["profile"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data-dir", default="/tmp/taskflow-bench-inbox")
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--no-cprofile", action="store_true", help="spans and CPU only")
    parser.add_argument("--profile", action="store_true", help="print the cProfile tables")
    parser.add_argument("--try", dest="try_file", default=None)
    parser.add_argument(
        "--against",
        default=None,
        help="another checkout (e.g. main's): its server is measured too, request by request "
        "in turn with this one's",
    )
    args = parser.parse_args()
    inbox = load_inbox(HERE.parent, "bench_inbox")
    inbox.apply_try(args.try_file)
    if args.try_file:
        os.environ[TRY_ENV] = str(Path(args.try_file).resolve())
    os.environ["TASKFLOW_CLAIM_PROFILE_CPROFILE"] = "0" if args.no_cprofile else "1"
    from taskflow.store.common import embedded

    handle = embedded.EmbeddedPostgres(Path(args.data_dir))
    with tempfile.TemporaryDirectory() as scratch:
        served = [Served("this checkout", inbox, os.path.join(scratch, "this.json"))]
        if args.against:
            other = load_inbox(Path(args.against).resolve() / "bench", "bench_inbox_against")
            served.insert(0, Served(args.against, other, os.path.join(scratch, "other.json")))
        try:
            url = inbox.with_database(handle.url(), inbox.Options.database)
            asyncio.run(drive(inbox, url, args.calls, served))
        finally:
            handle.stop()
        for one in served:
            print(f"\n#### {one.label}")
            with contextlib.suppress(FileNotFoundError):
                report(one.out, args.profile)


if __name__ == "__main__":
    main()
