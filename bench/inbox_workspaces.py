"""bench/inbox.py's workspace figures (docs/workspaces.md): the inbox and claim-next of the
service with and without workspaces, in the same run, on the same data split into two.

*Without*: the service as a superuser (row-level security does not bind it), callers in no
workspace: no setting, no predicate (today's single-team path before workspaces). *With*:
the service as an ordinary role (``taskflow.workspace = '*'`` its default), each caller in
its own workspace: its transactions name it in their BEGIN, the policies filter every held
table, claim-next's statement carries ``sl.workspace = $n``. Half of the subjects (and their
runs, slots, clocks and timers) and half of the principals move to a second workspace first.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

import asyncpg

from taskflow import errors
from taskflow.core.access.principals import Principal
from taskflow.core.slots.filters import SlotFilter
from taskflow.service.common import container
from taskflow.service.slots import slots, views
from taskflow.store.access import principals as principal_rows
from taskflow.store.common import db
from taskflow.store.workspaces import scope

B = "00000000-0000-4000-8000-0000000000b2"
DEFAULT = "00000000-0000-4000-8000-000000000001"
ROLE = "taskflow_bench_app"
PAGE = 50

SPLIT = (
    f"INSERT INTO workspace (id, name) VALUES ('{B}', 'bench-b') ON CONFLICT DO NOTHING",
    f"UPDATE subject SET workspace = '{B}' WHERE hashtext(id::text) % 2 = 0 AND workspace <> '{B}'",
    "UPDATE run r SET workspace = s.workspace FROM subject s "
    "WHERE s.id = r.subject AND r.workspace <> s.workspace",
    *(
        f"UPDATE {t} x SET workspace = r.workspace FROM run r "
        "WHERE r.id = x.run AND x.workspace <> r.workspace"
        for t in ("slot", "sla_clock", "timer")
    ),
    f"UPDATE principal SET workspace = '{B}' WHERE hashtext(id) % 2 = 0",
    f"DO $$ BEGIN CREATE ROLE {ROLE} LOGIN; EXCEPTION WHEN duplicate_object THEN NULL; END $$",
    f"ALTER ROLE {ROLE} SET taskflow.workspace = '*'",
    f"GRANT ALL ON ALL TABLES IN SCHEMA public TO {ROLE}",
    f"GRANT ALL ON ALL SEQUENCES IN SCHEMA public TO {ROLE}",
)


#: Everything back in the default workspace (a reused database starts alike).
JOIN = tuple(
    f"UPDATE {t} SET workspace = '{DEFAULT}' WHERE workspace = '{B}'"
    for t in ("subject", "run", "slot", "sla_clock", "timer", "principal", "audit_event")
)


def as_role(url: str, role: str) -> str:
    scheme, _, rest = url.partition("://")
    _, at, host = rest.rpartition("@")
    return f"{scheme}://{role}@{host if at else rest}"


def _p50(ms: list[float]) -> float:
    return sorted(ms)[len(ms) // 2] if ms else 0.0


async def _inbox(
    plain: container.Services,
    walled: container.Services,
    people: Sequence[Principal],
    rng: random.Random,
    iterations: int,
) -> tuple[list[float], list[float]]:
    without: list[float] = []
    with_: list[float] = []
    for i in range(iterations + 10):
        actor = rng.choice(people)
        bare = replace(actor, workspace="")
        started = time.perf_counter_ns()
        await views.inbox(plain, bare, SlotFilter(), first=PAGE, after=None)
        middle = time.perf_counter_ns()
        with scope.acting_in(actor.workspace):
            await views.inbox(walled, actor, SlotFilter(), first=PAGE, after=None)
        ended = time.perf_counter_ns()
        if i >= 10:  # warm-up left out
            without.append((middle - started) / 1e6)
            with_.append((ended - middle) / 1e6)
    return without, with_


async def _claims(
    url: str,
    services: container.Services,
    people: Sequence[Principal],
    rng: random.Random,
    attempts: int,
    walled: bool,
    claimers: int = 8,
) -> tuple[float, list[str]]:
    """Calls per second of ``claimers`` concurrent service claimers (every claim-next call:
    with workspaces a caller has half the candidates, so more calls find nothing; calls, not
    claims, compare the same work); the slots taken."""
    database = await db.Database.connect(url, min_size=claimers, max_size=claimers)
    own = replace(services, db=database)
    left = attempts
    taken: list[str] = []

    async def claimer() -> None:
        nonlocal left
        while left > 0:
            left -= 1
            actor = rng.choice(people)
            try:
                if walled:
                    with scope.acting_in(actor.workspace):
                        slot = await slots.claim_next(own, actor, SlotFilter())
                else:
                    slot = await slots.claim_next(own, replace(actor, workspace=""), SlotFilter())
            except errors.TaskflowError:
                continue
            taken.append(slot.id)

    try:
        started = time.perf_counter()
        await asyncio.gather(*(claimer() for _ in range(claimers)))
        seconds = time.perf_counter() - started
    finally:
        await database.close()
    return (attempts / seconds if seconds else 0.0), taken


async def measure(
    services: container.Services,
    url: str,
    admin: asyncpg.Connection[Any],
    iterations: int,
    attempts: int,
    release: Callable[[Any, Sequence[str]], Any],
    out: Callable[[str], None],
    seed: int = 7,
) -> None:
    """Split the data into two workspaces, then print both figures and their ratios."""
    began = time.perf_counter()
    for statement in SPLIT:
        await admin.execute(statement)
    await admin.execute("ANALYZE slot")
    out(f"\nworkspaces: data split into two in {time.perf_counter() - began:.0f} s")
    ids = [r["id"] for r in await admin.fetch("SELECT id FROM principal ORDER BY id")]
    async with services.db.connection() as conn:
        loaded = await principal_rows.get_many(conn, ids)
    people = [loaded[i] for i in ids]
    walled_db = await db.Database.connect(as_role(url, ROLE), min_size=2, max_size=4)
    walled = replace(services, db=walled_db)
    rng = random.Random(seed)
    try:
        without, with_ = await _inbox(services, walled, people, rng, iterations)
        out(
            f"  inbox p50 (service, {len(without)} calls): without {_p50(without):.2f} ms, "
            f"with {_p50(with_):.2f} ms, ratio {_p50(with_) / _p50(without):.3f}"
        )
        rates: dict[bool, list[float]] = {}
        hits: dict[bool, list[int]] = {}
        for walled_mode in (False, True, False, True):
            target = as_role(url, ROLE) if walled_mode else url
            rate, taken = await _claims(target, services, people, rng, attempts, walled_mode)
            rates.setdefault(walled_mode, []).append(rate)
            hits.setdefault(walled_mode, []).append(len(taken))
            async with services.db.connection() as conn:
                await release(conn, taken)
        plain_rate = sum(rates[False]) / 2
        walled_rate = sum(rates[True]) / 2
        out(
            f"  claim-next (service, 8 claimers, mean of 2): without {plain_rate:.0f} calls/s, "
            f"with {walled_rate:.0f} calls/s, ratio {plain_rate / walled_rate:.3f} "
            "(time per call); "
            f"claims made of {attempts} calls: without {hits[False]}, with {hits[True]}"
        )
    finally:
        await walled_db.close()
        for statement in JOIN:
            await admin.execute(statement)
