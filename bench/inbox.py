"""Inbox and claims: GraphQL and the service layer against raw SQL, on a large generated data set.

    python bench/inbox.py                 # 1 M slots, 100 k live, 5 k principals (10-15 min)
    python bench/inbox.py --scale 0.01    # a smoke run in seconds
    python bench/inbox.py --reuse         # keep the generated database between runs

Generates expense-approval runs with set-based SQL into a fresh database on the
embedded PostgreSQL (or ``--admin-url``), starts a real uvicorn server process
on loopback serving the taskflow app plus two plain Litestar endpoints, and
measures, for the same random principals in the same run:

- the inbox: the raw SQL statement ``taskflow.store.slots.queries.inbox`` sends (asyncpg),
  the service ``views.inbox`` in process, an empty HTTP endpoint (the floor of
  HTTP plus client), a plain Litestar JSON endpoint serving the same rows
  (token check + ``views.inbox`` + a dict per row), and the GraphQL ``inbox``
  query over HTTP; p50/p95 and ratios to the raw p50;
- claim-next: the bare statement of ``claims.claim_next`` against the service
  ``slots.claim_next`` (its own transaction with an audit row) with 8 and 32
  concurrent claimers, each on its own connection; claims/s and ratio;
- the GraphQL ``claimNext`` mutation's p50 beside the raw statement's;

first on a freshly vacuumed table, then again after churn (a claim run over a
third of the open slots, then released, without vacuum); ``--rounds N`` repeats both
phases and ends with a summary: each round's ratios, fresh and after churn side by side,
their means and the targets. See bench/README.md.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import math
import os
import random
import runpy
import signal
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

# Run as a script, this folder comes first on sys.path, and bench/calendar.py would
# shadow the standard library's calendar module: drop it, make the repository importable.
_HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _HERE]
ROOT = _HERE.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import asyncpg  # noqa: E402
import httpx  # noqa: E402

from bench import inbox_workspaces  # noqa: E402
from taskflow import clock, errors  # noqa: E402
from taskflow.api.graphql.common import relay  # noqa: E402
from taskflow.config import config  # noqa: E402
from taskflow.core.access.principals import Principal  # noqa: E402
from taskflow.core.definition import audience as au  # noqa: E402
from taskflow.core.slots.filters import SlotFilter  # noqa: E402
from taskflow.service.common import container  # noqa: E402
from taskflow.service.slots import slots, views  # noqa: E402
from taskflow.service.versions import definitions  # noqa: E402
from taskflow.store.access import principals as principal_rows  # noqa: E402
from taskflow.store.common import db, migrate, tables  # noqa: E402
from taskflow.store.common.db import with_database  # noqa: E402
from taskflow.store.slots import claims, queries  # noqa: E402

WORKFLOW = "expense-approval"
SECRET = "bench-inbox-signing-key-not-for-production-0123456789"
PAGE = 50
#: Bumped when the generated data changes shape (a reused database must match it).
GENERATOR = 3

INBOX_QUERY = """query Inbox($first: Int) { inbox(first: $first) {
  pageInfo { hasNextPage endCursor }
  edges { node { id name label status holder priority dueAt version workflow state runState
                 event subject { type externalId attributes } } } } }"""

CLAIM_NEXT_MUTATION = """mutation { claimNext(input: {}) { __typename
  ... on SlotSuccess { slot { id status holder version } }
  ... on Refusal { code } } }"""


# -- sizes -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Size:
    """How much data ``scale`` means (1.0: 1 M slots, 100 k live, 5 k principals, 200 teams)."""

    scale: float
    principals: int
    live: int
    slots: int
    roles: int
    groups: int

    @classmethod
    def of(cls, scale: float) -> Size:
        return cls(
            scale=scale,
            principals=max(40, round(5_000 * scale)),
            live=max(40, round(100_000 * scale)),
            slots=max(120, round(1_000_000 * scale)),
            roles=max(4, round(100 * scale)),
            groups=max(4, round(100 * scale)),
        )

    @property
    def group_size(self) -> int:
        return math.ceil(self.principals / self.groups)

    @property
    def groups_used(self) -> int:
        return math.ceil(self.principals / self.group_size)

    @property
    def done_runs(self) -> int:
        # Live runs hold 1.7 slots on average (40 % large: 3 states, 60 % small: 2, the
        # current one live); completed runs 2.33 (5 % rejected at review).
        return max(1, round((self.slots - 1.7 * self.live) / 2.33))


def pid(i: str) -> str:
    """SQL for the principal id of integer expression ``i``."""
    return f"('p' || lpad(({i})::text, 5, '0'))"


def role(i: str) -> str:
    return f"('r' || lpad(({i})::text, 3, '0'))"


def group(i: str) -> str:
    return f"('g' || lpad(({i})::text, 3, '0'))"


def generation_sql(size: Size, seed: int, digest: str) -> list[str]:
    """Set-based statements that fill an empty, migrated database."""
    p, nr, gs, ng = size.principals, size.roles, size.group_size, size.groups_used
    runs = size.live + size.done_runs
    amount = "to_char(amount, 'FM999,999,990.00') || ' GBP'"
    ref = "('EXP-' || lpad(n::text, 7, '0'))"
    stmts = [
        "SET max_parallel_workers_per_gather = 0",  # one process: setseed makes it repeatable
        f"SELECT setseed({(seed % 1000) / 1000.0})",
        # Principal i: roles r(i mod NR) and r(7i+3 mod NR), group g(i div GS); every tenth
        # principal manages the next nine (attribute "reports", as the example expects).
        f"""
        INSERT INTO principal (id, display_name, email, roles, groups, attributes, time_zone,
                               calendar, active, created_at, updated_at)
        SELECT {pid("i")}, 'Person ' || i, {pid("i")} || '@bench.example',
               ARRAY[{role(f"i % {nr}")}, {role(f"(7 * i + 3) % {nr}")}]::varchar[],
               ARRAY[{group(f"i / {gs}")}]::varchar[],
               CASE WHEN i % 10 = 0 AND i < {p - 1} THEN jsonb_build_object(
                        'region', 'eu', 'reports',
                        (SELECT jsonb_agg({pid("j")})
                         FROM generate_series(i + 1, least(i + 9, {p - 1})) j))
                    ELSE jsonb_build_object('region', 'eu') END,
               'Europe/London', 'uk-london', true, now(), now()
        FROM generate_series(0, {p - 1}) i
        """,
        # One row per run: live runs first; a large expense (> 1000) visits
        # submitted -> manager_approval -> payment, a small one skips the manager.
        f"""
        CREATE TEMP TABLE plan AS
        SELECT n, live, run_id, subject_id, submitter, dept, amount, large, rejected, claimed,
               started,
               CASE WHEN live THEN 1 + floor(r_k * (CASE WHEN large THEN 3 ELSE 2 END))::int
                    WHEN rejected THEN 1
                    WHEN large THEN 3 ELSE 2 END AS nslots
        FROM (
            SELECT *, amount > 1000 AS large FROM (
                SELECT n, n <= {size.live} AS live, gen_random_uuid() AS run_id,
                       gen_random_uuid() AS subject_id,
                       least({p - 1}, floor(random() * {max(1, p // 10)})::int * 10
                                       + 1 + floor(random() * 9)::int) AS submitter,
                       floor(random() * {nr})::int AS dept,
                       round((20 + random() * random() * 4980)::numeric, 2) AS amount,
                       random() AS r_k, random() < 0.05 AS rejected, random() < 0.3 AS claimed,
                       CASE WHEN n <= {size.live}
                            THEN now() - random() * interval '10 days'
                            ELSE now() - interval '10 days' - random() * interval '365 days'
                       END AS started
                FROM generate_series(1, {runs}) n
            ) a
        ) b
        """,
        f"""
        INSERT INTO subject (id, type, external_id, attributes, version, created_at, updated_at)
        SELECT subject_id, 'expense', {ref},
               jsonb_build_object('reference', {ref}, 'amount', amount, 'currency', 'GBP',
                                  'submitted_by', {pid("submitter")},
                                  'department', 'd' || lpad(dept::text, 3, '0'),
                                  'receipts', 1 + n % 5),
               1, started, started
        FROM plan
        """,
        f"""
        INSERT INTO run (id, workflow, definition_version, definition_digest, subject, state,
                         status, visit, correlation_key, idempotency_key, started_by, started_at,
                         state_entered_at, updated_at, ended_at, version)
        SELECT run_id, '{WORKFLOW}', 1, '{digest}', subject_id,
               CASE WHEN live THEN (CASE WHEN large
                                         THEN ARRAY['submitted', 'manager_approval', 'payment']
                                         ELSE ARRAY['submitted', 'payment'] END)[nslots]
                    WHEN rejected THEN 'rejected' ELSE 'paid' END,
               CASE WHEN live THEN 'active' ELSE 'completed' END,
               nslots + (NOT live)::int, {ref}, NULL, 'app', started,
               started + (nslots - 1) * interval '1 day', started + nslots * interval '1 day',
               CASE WHEN live THEN NULL ELSE started + nslots * interval '1 day' END,
               nslots + 1
        FROM plan
        """,
        # One slot per state visited; the current state's slot is live (30 % claimed).
        f"""
        INSERT INTO slot (id, run, visit, state, name, waits_for, item_index, item, label, status,
                          holder, audience, deny, residual, delegates, delegates_deny,
                          delegates_residual, priority, due_at, payload, workflow, version,
                          created_at, opened_at, claimed_at, satisfied_at, satisfied_by,
                          cancelled_at, updated_at, picked_at, held_us, held_since)
        SELECT gen_random_uuid(), run_id, v,
               CASE name WHEN 'finance_review' THEN 'submitted' ELSE name END, name,
               CASE name WHEN 'finance_review' THEN 'reviewed'
                         WHEN 'manager_approval' THEN 'approved' ELSE 'paid' END,
               NULL, NULL,
               CASE name WHEN 'finance_review' THEN 'Review expense ' || {ref} || ': ' || {amount}
                         WHEN 'manager_approval' THEN 'Approve ' || {ref} || ' by '
                              || {pid("submitter")} || ': ' || {amount}
                         ELSE 'Pay ' || {ref} || ' to ' || {pid("submitter")} END,
               status,
               CASE WHEN status = 'open' THEN NULL ELSE holder END,
               CASE name WHEN 'finance_review' THEN
                             CASE WHEN r2 < 0.3
                                  THEN ARRAY['role:' || {role("dept")},
                                             'group:' || {group(f"dept % {ng}")}]
                                  ELSE ARRAY['role:' || {role("dept")}] END
                         WHEN 'manager_approval' THEN ARRAY['attr:reports=' || {pid("submitter")}]
                         ELSE ARRAY['group:' || {group(f"(3 * dept) % {ng}")}] END,
               CASE name WHEN 'payment' THEN '{{}}'::text[]
                         ELSE ARRAY['user:' || {pid("submitter")}] END,
               '[]'::jsonb,
               CASE name WHEN 'payment' THEN '{{}}'::text[] ELSE ARRAY['role:finance-lead'] END,
               '{{}}'::text[], '[]'::jsonb,
               CASE WHEN r3 < 0.1 THEN 1 WHEN r3 < 0.3 THEN 2 WHEN r3 < 0.8 THEN 3
                    WHEN r3 < 0.95 THEN 4 ELSE 5 END,
               CASE WHEN is_live THEN now() + (r4 * 12 - 2) * interval '1 day'
                    ELSE opened + interval '2 days' END,
               CASE WHEN status <> 'satisfied' THEN NULL
                    WHEN name = 'payment' THEN jsonb_build_object(
                        'payment_reference', 'PAY-' || n, 'paid_on', to_char(opened, 'YYYY-MM-DD'))
                    WHEN rejected THEN '{{"decision": "reject"}}'::jsonb
                    ELSE '{{"decision": "approve"}}'::jsonb END,
               '{WORKFLOW}',
               CASE status WHEN 'open' THEN 1 WHEN 'claimed' THEN 2 ELSE 3 END,
               opened, opened,
               CASE WHEN status = 'open' THEN NULL ELSE opened + interval '1 hour' END,
               CASE WHEN status = 'satisfied' THEN opened + interval '20 hours' END,
               CASE WHEN status = 'satisfied' THEN holder END,
               NULL,
               CASE status WHEN 'open' THEN opened WHEN 'claimed' THEN opened + interval '1 hour'
                           ELSE opened + interval '20 hours' END,
               -- Held facts as the write path keeps them (core/slots/holding.py): claimed an
               -- hour after opening, held until satisfied.
               CASE WHEN status <> 'open' THEN opened + interval '1 hour' END,
               CASE WHEN status = 'satisfied' THEN 19 * 3600000000::bigint ELSE 0 END,
               CASE WHEN status = 'claimed' THEN opened + interval '1 hour' END
        FROM (
            SELECT s.*,
                   CASE WHEN NOT is_live THEN 'satisfied' WHEN claimed THEN 'claimed'
                        ELSE 'open' END AS status,
                   -- a holder who is a candidate: a member of the role, the manager, the group
                   CASE name
                       WHEN 'finance_review' THEN {pid(f"dept + {nr} * floor(r1 * (({p - 1} - dept) / {nr} + 1))::int")}
                       WHEN 'manager_approval' THEN {pid("submitter - submitter % 10")}
                       ELSE {pid(f"least({p - 1}, ((3 * dept) % {ng}) * {gs} + floor(r1 * {gs})::int)")}
                   END AS holder
            FROM (
                SELECT p.*, v, started + (v - 1) * interval '1 day' AS opened,
                       (CASE WHEN large THEN ARRAY['finance_review', 'manager_approval', 'payment']
                             ELSE ARRAY['finance_review', 'payment'] END)[v] AS name,
                       live AND v = nslots AS is_live,
                       random() AS r1, random() AS r2, random() AS r3, random() AS r4
                FROM plan p, generate_series(1, p.nslots) v
            ) s
        ) t
        """,  # noqa: E501
        """
        INSERT INTO audit_event (run, slot, kind, actor, reason, details, at)
        SELECT run_id, NULL, 'run.started', 'app', NULL, '{}'::jsonb, started FROM plan
        """,
        # SLA clocks and timers of live slots, as the engine keeps them for expense-approval
        # (finance_review: assigned within 4 business hours, finished within 2 business days;
        # the others: finished within 3). Due instants follow the slot's due instant (the
        # nearest unmet milestone) instead of calendar arithmetic. Ended slots keep none.
        """
        CREATE TEMP TABLE live_due AS
        SELECT id, run, name, status, opened_at, claimed_at, status = 'open' AS waiting,
               CASE WHEN name <> 'finance_review' THEN NULL
                    WHEN status = 'open' THEN due_at
                    ELSE due_at - interval '28 hours' END AS assigned_due,
               CASE WHEN name = 'finance_review' AND status = 'open'
                    THEN due_at + interval '28 hours' ELSE due_at END AS finished_due
        FROM slot WHERE status IN ('open', 'claimed')
        """,
        """
        INSERT INTO sla_clock (id, slot, run, milestone, budget_kind, budget_us, working_days,
                               calendar, started_at, pauses, met_at, due_at, breached_at,
                               updated_at)
        SELECT gen_random_uuid(), d.id, d.run, m.milestone, 'business', m.budget_us, m.days,
               'uk-london', d.opened_at, '[]'::jsonb,
               CASE WHEN m.milestone = 'assigned' AND NOT d.waiting THEN d.claimed_at END,
               due, CASE WHEN due < now() AND (m.milestone = 'finished' OR d.waiting)
                         THEN due END,
               coalesce(d.claimed_at, d.opened_at)
        FROM live_due d
        JOIN (VALUES ('finance_review', 'assigned', 14400000000, 0.0),
                     ('finance_review', 'finished', 0, 2.0),
                     ('manager_approval', 'finished', 0, 3.0),
                     ('payment', 'finished', 0, 3.0)) m(name, milestone, budget_us, days)
          ON m.name = d.name
        CROSS JOIN LATERAL (SELECT CASE m.milestone WHEN 'assigned' THEN d.assigned_due
                                                    ELSE d.finished_due END AS due) x
        """,
        # The report's clock copied onto the slot, as every clock write keeps it
        # (store/clocks/deadlines.py: finished, else assigned).
        """
        UPDATE slot s SET sla_milestone = k.milestone, sla_calendar = k.calendar,
                          sla_budget_us = k.budget_us, sla_working_days = k.working_days,
                          sla_pauses = k.pauses, sla_met_at = k.met_at, sla_due_at = k.due_at,
                          sla_breached_at = k.breached_at
        FROM (SELECT DISTINCT ON (slot) * FROM sla_clock ORDER BY slot, milestone DESC) k
        WHERE s.id = k.slot
        """,
        """
        INSERT INTO timer (key, run, slot, kind, part, due_at, status, fired, fired_at,
                           updated_at)
        SELECT d.id || ':' || t.kind || ':' || t.part, d.run, d.id, t.kind, t.part, due,
               CASE WHEN t.on_claim_cancel AND NOT d.waiting THEN 'cancelled'
                    WHEN due < now() THEN 'fired' ELSE 'armed' END,
               (due < now() AND NOT (t.on_claim_cancel AND NOT d.waiting))::int,
               CASE WHEN due < now() AND NOT (t.on_claim_cancel AND NOT d.waiting) THEN due END,
               coalesce(d.claimed_at, d.opened_at)
        FROM live_due d
        JOIN (VALUES ('finance_review', 'breach', 'assigned', 'assigned', '0 h', true),
                     ('finance_review', 'breach', 'finished', 'finished', '0 h', false),
                     ('finance_review', 'reminder', '0', 'finished', '-12 h', false),
                     ('finance_review', 'reminder', '1', 'assigned', '0 h', true),
                     ('finance_review', 'reminder', '2', 'finished', '0 h', false),
                     ('manager_approval', 'breach', 'finished', 'finished', '0 h', false),
                     ('manager_approval', 'reminder', '0', 'finished', '-36 h', false),
                     ('manager_approval', 'reminder', '1', 'finished', '0 h', false),
                     ('payment', 'breach', 'finished', 'finished', '0 h', false),
                     ('payment', 'reminder', '0', 'finished', '0 h', false))
             t(name, kind, part, base, shift, on_claim_cancel)
          ON t.name = d.name
        CROSS JOIN LATERAL (SELECT CASE t.base WHEN 'assigned' THEN d.assigned_due
                                               ELSE d.finished_due END
                                   + t.shift::interval AS due) x
        """,
        "DROP TABLE plan",
        "DROP TABLE live_due",
    ]
    return stmts


def fingerprint() -> str:
    """What generated data depends on: this generator and the migrations it loaded into."""
    names = sorted(p.name for p in (ROOT / "migrations").glob("*.py"))
    return f"generator {GENERATOR}; " + ",".join(names)


SLOT_INDEXES = ("slot_live_by_due", "slot_open_audience", "slot_open_by_due", "slot_held")


async def generate(conn: asyncpg.Connection[Any], size: Size, seed: int) -> float:
    """Fill the migrated database; seconds taken. Extra indexes are built after the load."""
    started = time.perf_counter()
    digest = definitions.load_from_env().get(WORKFLOW, 1).digest
    await conn.execute("SET maintenance_work_mem = '256MB'")
    for name, _ in tables.EXTRA_INDEXES:
        await conn.execute(f"DROP INDEX IF EXISTS {name}")
    async with conn.transaction():
        for statement in generation_sql(size, seed, digest):
            await conn.execute(statement)
    for _, create in tables.EXTRA_INDEXES:
        await conn.execute(create)
    await conn.execute(
        "CREATE TABLE bench_meta AS "
        "SELECT $1::float8 AS scale, $2::int AS seed, $3::text AS schema",
        size.scale,
        seed,
        fingerprint(),
    )
    await conn.execute(
        "VACUUM (ANALYZE) principal, subject, run, slot, audit_event, sla_clock, timer"
    )
    return time.perf_counter() - started


async def counts(conn: asyncpg.Connection[Any]) -> dict[str, int]:
    row = await conn.fetchrow(
        """SELECT (SELECT count(*) FROM slot) AS slots,
                  (SELECT count(*) FROM slot WHERE status IN ('open', 'claimed')) AS live,
                  (SELECT count(*) FROM slot WHERE status = 'open') AS open,
                  (SELECT count(*) FROM run) AS runs,
                  (SELECT count(*) FROM principal) AS principals"""
    )
    assert row is not None
    return dict(row)


async def index_sizes(conn: asyncpg.Connection[Any]) -> dict[str, int]:
    rows = await conn.fetch(
        "SELECT relname, pg_relation_size(oid) AS bytes FROM pg_class WHERE relname = ANY($1)",
        list(SLOT_INDEXES),
    )
    return {r["relname"]: r["bytes"] for r in rows}


# -- the server process ------------------------------------------------------------------------


def settings_for(url: str) -> config.Settings:
    # An external database and a given key: nothing is written to the data dir.
    data_dir = "/tmp/taskflow-bench-inbox-unused"
    return config.load(
        {
            "TASKFLOW_DATABASE_URL": url,
            "TASKFLOW_SECRET_KEYS": SECRET,
            "TASKFLOW_DATA_DIR": data_dir,
            "TASKFLOW_ENV": "prod",
        }
    )


def row_json(row: queries.SlotRow) -> dict[str, Any]:
    """One inbox row as the plain endpoint serves it: the fields the GraphQL query asks for."""
    slot = row.slot
    return {
        "id": relay.to_global_id("Slot", slot.id),
        "cursor": row.cursor[2],
        "name": slot.name,
        "label": slot.label,
        "status": slot.status.upper(),
        "holder": slot.holder,
        "priority": slot.priority,
        "dueAt": row.due_at,
        "version": slot.version,
        "workflow": row.workflow,
        "state": slot.state,
        "runState": row.run_state,
        "event": slot.waits_for,
        "subject": {
            "type": row.subject_type,
            "externalId": row.subject_external_id,
            "attributes": row.subject_attributes,
        },
    }


def apply_try(path: str | None) -> None:
    """Run ``path`` (a Python file that monkeypatches a proposed change) in this process."""
    if path:
        runpy.run_path(path, run_name="bench_try")


def serve(url: str, port: int, try_file: str | None) -> None:
    """Run the taskflow app plus the plain endpoints under uvicorn (the child process)."""
    import uvicorn
    from litestar import Request, get
    from litestar.datastructures import State

    from taskflow import logs
    from taskflow.api import app as api_app
    from taskflow.service.access import principals as principal_service

    logs.configure()  # as `taskflow serve` does: one access line a request, in its format
    apply_try(try_file)
    settings = settings_for(url)

    @contextlib.asynccontextmanager
    async def provide() -> AsyncIterator[container.Services]:
        database = await db.Database.connect(url, min_size=4, max_size=10)
        try:
            yield container.build(database, settings, clock.SystemClock())
        finally:
            await database.close()

    @get("/plain/ping")
    async def ping() -> dict[str, str]:
        return {}

    @get("/plain/inbox")
    async def plain_inbox(request: Request[Any, Any, Any], state: State) -> dict[str, Any]:
        services: container.Services = state.services
        token = request.headers.get("authorization", "").partition(" ")[2]
        me = await principal_service.authenticate(services, token)
        found, has_next = await views.inbox(services, me, SlotFilter(), first=PAGE, after=None)
        return {"edges": [row_json(r) for r in found], "hasNextPage": has_next}

    application = api_app.create_app(provide, dev=False)
    application.register(ping)
    application.register(plain_inbox)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    uvicorn.run(application, host="127.0.0.1", port=port, log_level="warning", access_log=False)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def server(url: str, try_file: str | None) -> Iterator[tuple[str, int]]:
    """A uvicorn server process on loopback; yields (base URL, pid)."""
    port = free_port()
    command = [sys.executable, __file__, "--serve", url, "--port", str(port)]
    process = subprocess.Popen(command + (["--try", try_file] if try_file else []), cwd=ROOT)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"the bench server exited with {process.returncode}")
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{base}/health", timeout=1).status_code == 200:
                    break
            if time.monotonic() > deadline:
                raise RuntimeError("the bench server did not answer /health within 60 s")
            time.sleep(0.1)
        yield base, process.pid
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


# -- measuring ---------------------------------------------------------------------------------


@dataclass
class Latencies:
    """Per-call latencies in ms of one way of answering."""

    name: str
    ms: list[float] = field(default_factory=list)

    def pct(self, q: float) -> float:
        ordered = sorted(self.ms)
        return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))] if ordered else 0.0


async def timed(target: Latencies, call: Awaitable[Any]) -> Any:
    started = time.perf_counter_ns()
    result = await call
    target.ms.append((time.perf_counter_ns() - started) / 1e6)
    return result


class Capture:
    """Stands in for a connection to catch the SQL (and arguments) a query function sends."""

    def __init__(self) -> None:
        self.sql = ""
        self.args: tuple[Any, ...] = ()

    async def fetch(self, sql: str, *args: Any) -> list[Any]:
        self.sql, self.args = sql, args
        return []

    async def fetchrow(self, sql: str, *args: Any) -> None:
        self.sql, self.args = sql, args


async def inbox_statement(actor: Principal, keys: Sequence[str]) -> tuple[str, tuple[Any, ...]]:
    """The exact statement and arguments ``views.inbox`` sends for a first page."""
    capture = Capture()
    await queries.inbox(
        capture,  # type: ignore[arg-type]
        principal_id=actor.id,
        keys=keys,
        f=SlotFilter(),
        after=None,
        limit=PAGE + 1,
    )
    return capture.sql, capture.args


async def claim_statement() -> str:
    """The bare claim-next statement (arguments: principal id, keys, now): the claim and its
    timeline line, without the run, clocks and timers the use case reads with it."""
    sql, _ = claims.claim_next_statement(
        "x", ["any"], SlotFilter(), clock.SystemClock().now(), context=False
    )
    return sql


@dataclass
class World:
    """What the measuring client holds: the services, principals, tokens and statements."""

    services: container.Services
    url: str
    principals: list[Principal]
    keys: dict[str, list[str]]
    claim_sql: str
    rng: random.Random

    #: One bearer token per principal, as a frontend keeps its session's token.
    tokens: dict[str, str] = field(default_factory=dict)

    def token(self, actor: Principal) -> str:
        if actor.id not in self.tokens:
            self.tokens[actor.id] = self.services.staff_tokens.mint(
                actor.id, self.services.clock.now()
            )
        return self.tokens[actor.id]


async def measure_inbox(
    world: World, http: httpx.AsyncClient, iterations: int, budget_s: float = 120.0
) -> list[Latencies]:
    """Interleaved per principal: raw SQL, service, HTTP floor, plain JSON, GraphQL.

    Stops early after ``budget_s`` seconds (a slow baseline must not stretch the run).
    """
    raw, service, floor, plain, graphql = (
        Latencies("raw SQL (asyncpg, same statement)"),
        Latencies("service views.inbox (in process)"),
        Latencies("HTTP floor (empty Litestar endpoint)"),
        Latencies("plain Litestar JSON (HTTP)"),
        Latencies("GraphQL inbox (HTTP)"),
    )
    warmup = max(2, iterations // 10)
    sample = [world.rng.choice(world.principals) for _ in range(warmup + iterations)]
    deadline = time.monotonic() + budget_s
    async with world.services.db.connection() as conn:
        for i, actor in enumerate(sample):
            if i > warmup and time.monotonic() > deadline:
                break
            sql, args = await inbox_statement(actor, world.keys[actor.id])
            auth = {"Authorization": f"Bearer {world.token(actor)}"}
            body = {"query": INBOX_QUERY, "variables": {"first": PAGE}}
            rows = await timed(raw, conn.fetch(sql, *args))
            found, _ = await timed(
                service, views.inbox(world.services, actor, SlotFilter(), first=PAGE, after=None)
            )
            await timed(floor, http.get("/plain/ping"))
            answer = await timed(plain, http.get("/plain/inbox", headers=auth))
            reply = await timed(graphql, http.post("/graphql", json=body, headers=auth))
            if i < warmup:
                # Every way must serve the same rows (and warm-up calls are not counted).
                expected = [str(r["id"]) for r in rows[:PAGE]]
                assert [r.slot.id for r in found] == expected
                assert [e["cursor"] for e in answer.json()["edges"]] == expected
                edges = reply.json()["data"]["inbox"]["edges"]
                assert [relay.from_global_id(e["node"]["id"])[1] for e in edges] == expected
                for lat in (raw, service, floor, plain, graphql):
                    lat.ms.clear()
    return [raw, service, floor, plain, graphql]


async def release(conn: db.Connection, ids: Sequence[str]) -> None:
    """Put claimed slots back as they were before the claim (one statement), so every run
    starts alike: open, the pickup clock unmet, the timers the claim cancelled armed again
    (the generator leaves none cancelled on open slots), due at the nearest clock again."""
    await conn.execute(
        """
        WITH unmet AS (
            UPDATE sla_clock SET met_at = NULL
            WHERE slot = ANY($1::uuid[]) AND milestone = 'assigned' AND met_at IS NOT NULL
        ), rearmed AS (
            UPDATE timer SET status = 'armed' WHERE slot = ANY($1::uuid[]) AND status = 'cancelled'
        )
        UPDATE slot s SET status = 'open', holder = NULL, claimed_at = NULL,
                          version = version + 1, updated_at = now(),
                          due_at = coalesce((SELECT min(k.due_at) FROM sla_clock k
                                             WHERE k.slot = s.id
                                               AND (k.met_at IS NULL OR k.milestone = 'assigned')),
                                            s.due_at)
        WHERE id = ANY($1::uuid[])
        """,
        list(ids),
    )


@dataclass(frozen=True)
class ClaimRun:
    name: str
    claimers: int
    claims: int
    attempts: int
    seconds: float

    @property
    def per_second(self) -> float:
        return self.claims / self.seconds if self.seconds else 0.0


async def claim_run(world: World, mode: str, claimers: int, attempts: int) -> ClaimRun:
    """``attempts`` claim-next calls by random principals over ``claimers`` connections."""
    taken: list[str] = []
    left = attempts
    database = await db.Database.connect(world.url, min_size=claimers, max_size=claimers)
    services = replace(world.services, db=database)

    def next_actor() -> Principal | None:
        nonlocal left
        if left <= 0:
            return None
        left -= 1
        return world.rng.choice(world.principals)

    async def raw_claimer() -> None:
        async with database.connection() as conn:
            while (actor := next_actor()) is not None:
                row = await conn.fetchrow(
                    world.claim_sql, actor.id, world.keys[actor.id], services.clock.now()
                )
                if row is not None:
                    taken.append(str(row["id"]))

    async def service_claimer() -> None:
        while (actor := next_actor()) is not None:
            try:
                slot = await slots.claim_next(services, actor, SlotFilter())
            except errors.TaskflowError:
                continue
            taken.append(slot.id)

    # Plain gather from outside any transaction: each claimer holds (or borrows) its own
    # connection from a pool exactly as large as the claimers (STACK-NOTES, contextvars).
    worker: Callable[[], Awaitable[None]] = raw_claimer if mode == "raw" else service_claimer
    try:
        started = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(claimers)))
        seconds = time.perf_counter() - started
        assert len(set(taken)) == len(taken), "a slot was claimed twice"
        async with database.connection() as conn:
            await release(conn, taken)
    finally:
        await database.close()
    label = "raw statement" if mode == "raw" else "service slots.claim_next"
    return ClaimRun(label, claimers, len(taken), attempts, seconds)


async def measure_claims(
    world: World, attempts: int, vacuum: bool, admin: asyncpg.Connection[Any]
) -> list[ClaimRun]:
    runs = []
    for claimers in (8, 32):
        for mode in ("raw", "service"):
            if vacuum:
                await admin.execute("VACUUM slot")
            runs.append(await claim_run(world, mode, claimers, attempts))
    return runs


async def measure_claim_latency(
    world: World, http: httpx.AsyncClient, iterations: int
) -> list[Latencies]:
    """One caller: the raw claim-next statement, then the GraphQL mutation, alternately."""
    raw, graphql = Latencies("raw statement"), Latencies("GraphQL claimNext (HTTP)")
    taken: list[str] = []
    # Each principal has made a request before, as a frontend's session has (the server
    # then knows its caller: claimNext checks it in the claim statement, one round trip).
    for actor in world.principals:
        auth = {"Authorization": f"Bearer {world.token(actor)}"}
        await http.post("/graphql", json={"query": "{ me { login } }"}, headers=auth)
    async with world.services.db.connection() as conn:
        for _ in range(iterations):
            actor = world.rng.choice(world.principals)
            auth = {"Authorization": f"Bearer {world.token(actor)}"}
            row = await timed(
                raw,
                conn.fetchrow(
                    world.claim_sql, actor.id, world.keys[actor.id], world.services.clock.now()
                ),
            )
            if row is not None:
                taken.append(str(row["id"]))
            answer = await timed(
                graphql, http.post("/graphql", json={"query": CLAIM_NEXT_MUTATION}, headers=auth)
            )
            result = answer.json()["data"]["claimNext"]
            if result["__typename"] == "SlotSuccess":
                taken.append(relay.from_global_id(result["slot"]["id"])[1])
        await release(conn, taken)
    return [raw, graphql]


async def churn(world: World, admin: asyncpg.Connection[Any]) -> ClaimRun:
    """One claim run over a third of the open slots with the raw statement, then released."""
    open_slots = int(await admin.fetchval("SELECT count(*) FROM slot WHERE status = 'open'"))
    return await claim_run(world, "raw", 8, max(10, open_slots // 3))


# -- the report --------------------------------------------------------------------------------


FRESH, CHURNED = "fresh (after VACUUM ANALYZE)", "after churn (no vacuum)"


def load_average() -> str:
    """The machine's 1-minute load average, to print beside a figure (a shared machine's
    load moves every ratio)."""
    try:
        return f"load {os.getloadavg()[0]:.1f}"
    except OSError:
        return "load ?"


@dataclass
class Phase:
    name: str
    sizes: dict[str, int]
    inbox: list[Latencies]
    claims: list[ClaimRun]
    claim_latency: list[Latencies]
    load: str = ""

    def ratios(self) -> dict[str, float]:
        """The issue's figures: claimNext and the GraphQL inbox as multiples of their raw
        statements' p50, the service's claims/s in % of the raw statement's per claimers."""
        found = {
            "claimNext": _ratio(self.claim_latency[1], self.claim_latency[0]),
            "inbox": _ratio(self.inbox[-1], self.inbox[0]),
        }
        raw = {c.claimers: c.per_second for c in self.claims if c.name == "raw statement"}
        for c in self.claims:
            if c.name != "raw statement" and raw.get(c.claimers):
                found[f"service {c.claimers}"] = c.per_second / raw[c.claimers] * 100
        return found


def _ratio(lat: Latencies, raw: Latencies) -> float:
    return lat.pct(0.5) / raw.pct(0.5) if raw.pct(0.5) else 0.0


#: The issue's lines (issue 29, item 10): at most (x raw) or at least (% of raw).
TARGETS = {
    "claimNext": "<= 2.5x",
    "inbox": "<= 2.2x",
    "service 8": ">= 85 %",
    "service 32": ">= 85 %",
}


def report_summary(phases: Sequence[Phase], out: Callable[[str], None]) -> None:
    """Every round's figures, fresh and after churn side by side, and their means."""
    names = list(TARGETS)
    out("\n== summary: p50 x raw statement (claimNext, inbox), service claims/s % of raw")
    out(f"  {'round':14} " + " ".join(f"{n:>21}" for n in names))
    out(f"  {'':14} " + " ".join(f"{'fresh':>10} {'churned':>10}" for _ in names))
    pairs = [(phases[i], phases[i + 1]) for i in range(0, len(phases) - 1, 2)]
    for number, (fresh, churned) in enumerate(pairs, 1):
        a, b = fresh.ratios(), churned.ratios()
        cells = " ".join(f"{_cell(n, a.get(n))} {_cell(n, b.get(n))}" for n in names)
        out(f"  {number:<3} {fresh.load:>10} {cells}")
    if pairs:
        means = []
        for n in names:
            for side in (0, 1):
                values = [p[side].ratios().get(n) for p in pairs]
                kept = [v for v in values if v is not None]
                means.append(_cell(n, sum(kept) / len(kept) if kept else None))
        out(f"  {'mean of ' + str(len(pairs)):14} " + " ".join(means))
    out(f"  {'target':14} " + " ".join(f"{t:>21}" for t in TARGETS.values()))


def _cell(name: str, value: float | None) -> str:
    if value is None:
        return f"{'-':>10}"
    return f"{value:9.1f}%" if name.startswith("service") else f"{value:9.2f}x"


def report_phase(phase: Phase, out: Callable[[str], None]) -> None:
    out(f"\n== {phase.name} ({phase.load})")
    out("index MB: " + ", ".join(f"{k} {phase.sizes.get(k, 0) / 2**20:.1f}" for k in SLOT_INDEXES))
    base = phase.inbox[0].pct(0.5)
    out(f"\ninbox, first {PAGE}, {len(phase.inbox[0].ms)} random principals")
    out(f"  {'':42} {'p50 ms':>8} {'p95 ms':>8} {'x raw':>7}")
    for lat in phase.inbox:
        out(
            f"  {lat.name:42} {lat.pct(0.5):8.2f} {lat.pct(0.95):8.2f} "
            f"{lat.pct(0.5) / base if base else 0:7.1f}"
        )
    out("\nclaim-next, random principals")
    out(f"  {'':30} {'claimers':>8} {'claims':>7} {'claims/s':>9} {'% raw':>6}")
    raw_rate = {c.claimers: c.per_second for c in phase.claims if c.name == "raw statement"}
    for c in phase.claims:
        share = c.per_second / raw_rate[c.claimers] * 100 if raw_rate.get(c.claimers) else 0
        out(f"  {c.name:30} {c.claimers:8} {c.claims:7} {c.per_second:9.0f} {share:6.0f}")
    raw, graphql = phase.claim_latency
    out(f"\nclaim-next latency, one caller, {len(raw.ms)} calls")
    out(f"  {'':30} {'p50 ms':>8} {'p95 ms':>8} {'x raw':>7}")
    for lat in (raw, graphql):
        ratio = lat.pct(0.5) / raw.pct(0.5) if raw.pct(0.5) else 0
        out(f"  {lat.name:30} {lat.pct(0.5):8.2f} {lat.pct(0.95):8.2f} {ratio:7.1f}")


# -- the run -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Options:
    scale: float = 1.0
    seed: int = 20261129
    iterations: int = 1000
    claims: int = 10_000
    latency_calls: int = 300
    database: str = "bench_inbox"
    reuse: bool = False
    keep: bool = True
    #: Rounds of both phases on one server (each after the first starts from reindexed,
    #: vacuumed tables); the summary prints each round and their mean side by side.
    rounds: int = 1
    #: Print the inbox and claim figures with and without workspaces (bench/inbox_workspaces.py).
    workspaces: bool = True
    #: A Python file run in both processes before measuring, to try a proposed change.
    try_file: str | None = None


async def reindex(conn: asyncpg.Connection[Any]) -> None:
    """The slot table's indexes rebuilt: VACUUM does not shrink indexes a previous run
    bloated; rebuilding them from the declaration also applies a --try file's index change."""
    await conn.execute("REINDEX TABLE slot")
    for name, create in tables.EXTRA_INDEXES:
        if " ON slot " in create:
            await conn.execute(f"DROP INDEX IF EXISTS {name}")
            await conn.execute(create)


async def prepare(admin_url: str, options: Options, out: Callable[[str], None]) -> str:
    """The bench database, generated (or reused when its scale and seed match)."""
    url = with_database(admin_url, options.database)
    admin = await asyncpg.connect(admin_url)
    try:
        exists = await admin.fetchval(
            "SELECT true FROM pg_database WHERE datname = $1", options.database
        )
        if exists and options.reuse:
            conn = await asyncpg.connect(url)
            try:
                meta = await conn.fetchrow("SELECT scale, seed, schema FROM bench_meta")
            except (asyncpg.UndefinedTableError, asyncpg.UndefinedColumnError):
                meta = None
            finally:
                await conn.close()
            wanted = (options.scale, options.seed, fingerprint())
            if meta is not None and (meta["scale"], meta["seed"], meta["schema"]) == wanted:
                out(f"reusing database {options.database} (scale {options.scale}), reindexed")
                conn = await asyncpg.connect(url)
                try:
                    await reindex(conn)
                finally:
                    await conn.close()
                return url
        await admin.execute(f"DROP DATABASE IF EXISTS {options.database} WITH (FORCE)")
        await admin.execute(f"CREATE DATABASE {options.database}")
    finally:
        await admin.close()
    await migrate.migrate(url)
    conn = await asyncpg.connect(url)
    try:
        seconds = await generate(conn, Size.of(options.scale), options.seed)
    finally:
        await conn.close()
    out(f"generated in {seconds:.0f} s")
    return url


def say(line: str) -> None:
    print(line, flush=True)


async def run(admin_url: str, options: Options, out: Callable[[str], None] = say) -> list[Phase]:
    """The whole benchmark against the server at ``admin_url``; prints as it goes."""
    began = time.perf_counter()
    apply_try(options.try_file)
    url = await prepare(admin_url, options, out)
    admin = await asyncpg.connect(url)
    database = await db.Database.connect(url, min_size=2, max_size=4)
    phases: list[Phase] = []
    try:
        out("data: " + ", ".join(f"{k} {v}" for k, v in (await counts(admin)).items()))
        # Deterministic bloat: autovacuum would clean up at a random moment of the run.
        await admin.execute("ALTER TABLE slot SET (autovacuum_enabled = false)")
        await admin.execute("VACUUM (ANALYZE) slot")
        services = container.build(database, settings_for(url), clock.SystemClock())
        async with database.connection() as conn:
            everyone = await conn.fetch("SELECT id FROM principal ORDER BY id")
            loaded = await principal_rows.get_many(conn, [r["id"] for r in everyone])
        people = [loaded[r["id"]] for r in everyone]
        world = World(
            services=services,
            url=url,
            principals=people,
            keys={p.id: sorted(au.principal_keys(p)) for p in people},
            claim_sql=await claim_statement(),
            rng=random.Random(options.seed),
        )
        with server(url, options.try_file) as (base, _):
            async with httpx.AsyncClient(base_url=base, timeout=60) as http:
                for round_ in range(1, options.rounds + 1):
                    if round_ > 1:
                        out(f"\n######## round {round_} of {options.rounds} ({load_average()})")
                        await reindex(admin)
                        await admin.execute("VACUUM (ANALYZE) slot")
                    for name in (FRESH, CHURNED):
                        if name == CHURNED:
                            churned = await churn(world, admin)
                            out(
                                f"\nchurn: {churned.claims} claims by 8 raw claimers in "
                                f"{churned.seconds:.1f} s, then released"
                            )
                        sizes = await index_sizes(admin)
                        inbox = await measure_inbox(world, http, options.iterations)
                        claims = await measure_claims(world, options.claims, name == FRESH, admin)
                        latency = await measure_claim_latency(world, http, options.latency_calls)
                        phases.append(Phase(name, sizes, inbox, claims, latency, load_average()))
                        report_phase(phases[-1], out)
        report_summary(phases, out)
        if options.workspaces:
            await inbox_workspaces.measure(
                services, url, admin, options.iterations, options.claims, release, out
            )
        out(f"\ntotal {time.perf_counter() - began:.0f} s")
    finally:
        with contextlib.suppress(Exception):
            await admin.execute("ALTER TABLE slot RESET (autovacuum_enabled)")
        await database.close()
        await admin.close()
        if not options.keep:
            drop = await asyncpg.connect(admin_url)
            try:
                await drop.execute(f"DROP DATABASE IF EXISTS {options.database} WITH (FORCE)")
            finally:
                await drop.close()
    return phases


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--scale", type=float, default=1.0, help="1.0: 1 M slots (default)")
    parser.add_argument("--seed", type=int, default=Options.seed)
    parser.add_argument("--iterations", type=int, default=None, help="inbox calls per way")
    parser.add_argument("--claims", type=int, default=None, help="claim-next calls per run")
    parser.add_argument("--reuse", action="store_true", help="reuse a generated database")
    parser.add_argument(
        "--no-workspaces",
        action="store_true",
        help="leave out the figures with and without workspaces (they split the data in two)",
    )
    parser.add_argument(
        "--rounds", type=int, default=1, help="rounds of both phases; the summary's mean"
    )
    parser.add_argument(
        "--data-dir", default="/tmp/taskflow-bench-inbox", help="embedded PostgreSQL data dir"
    )
    parser.add_argument("--admin-url", default=None, help="an external PostgreSQL instead")
    parser.add_argument(
        "--try",
        dest="try_file",
        default=None,
        help="a Python file run in the client and server processes first (monkeypatch a "
        "proposed change and compare)",
    )
    parser.add_argument("--serve", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve:
        serve(args.serve, args.port, args.try_file)
        return
    scale = args.scale
    options = Options(
        scale=scale,
        seed=args.seed,
        iterations=args.iterations or max(20, min(600, round(20_000 * scale))),
        claims=args.claims or max(20, round(10_000 * scale)),
        latency_calls=max(10, min(300, round(3_000 * scale))),
        reuse=args.reuse,
        rounds=max(1, args.rounds),
        workspaces=not args.no_workspaces,
        try_file=str(Path(args.try_file).resolve()) if args.try_file else None,
    )
    say(
        f"taskflow inbox benchmark: scale {scale}, seed {options.seed}, {os.cpu_count()} CPUs, "
        f"{load_average()}"
    )
    if options.try_file:
        say(f"trying {options.try_file}")
    if args.admin_url:
        asyncio.run(run(args.admin_url, options))
        return
    from taskflow.store.common import embedded

    data_dir = Path(args.data_dir)
    if data_dir.resolve().is_relative_to(Path.home()):
        parser.error("keep the data dir out of the home directory (pgserver opens its parents)")
    server_handle = embedded.EmbeddedPostgres(data_dir)
    try:
        asyncio.run(run(server_handle.url(), options))
    finally:
        server_handle.stop()


if __name__ == "__main__":
    main()
