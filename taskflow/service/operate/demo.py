"""Demo data: the example principals, a dozen runs moved along by people, and weeks of
past runs for the SLA report.

The dozen live runs start now. The past runs (``history`` in the demo file) are
planned from a fixed seed over the last weeks and played at their own past
instants, each step on a clock set to its instant, through the same use cases
as any run: their clocks met or breached as the delays say, so the report's
charts have weeks of history on the first day. Steps that would fall after
now are left undone, so the last days' runs are still live: some at risk,
some breached, in the inboxes of the people they wait for.

Seeding is idempotent: runs start with an idempotency key of their own, and
the steps of a run are played only when it was created by this call, so
``taskflow demo`` can be run again on the same database. Each run is started
and played in ONE transaction (the use cases run inside it, see
``Database.bound``), retried whole when it loses a race with a running server
(its worker, its users): a failure leaves nothing half-played, and a rerun
finishes the job. It is safe beside a running ``taskflow serve``.
"""

from __future__ import annotations

import dataclasses
import json
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from taskflow import clock, errors
from taskflow.core.access.principals import Principal
from taskflow.service.access import principals as principal_service
from taskflow.service.common import retry
from taskflow.service.common.container import Services
from taskflow.service.compose import children as child_lane
from taskflow.service.compose import reading
from taskflow.service.files import files as file_service
from taskflow.service.runs import owned
from taskflow.service.runs import runs as run_service
from taskflow.service.slots import slots as slot_service
from taskflow.store.runs import runs as rows


@dataclass(frozen=True)
class Seeded:
    principals: list[Principal]
    started: int
    existing: int
    #: Past runs played now (and already there), from the demo file's history.
    past_started: int = 0
    past_existing: int = 0


@dataclass(frozen=True)
class PastRun:
    """A run of the demo's history: what to start, when, and its steps' instants."""

    spec: dict[str, Any]
    started_at: datetime
    steps: list[tuple[datetime, dict[str, Any]]]


async def _principal(services: Services, principal_id: str) -> Principal:
    found = await principal_service.get(services, principal_id)
    if found is None:
        raise errors.ValidationError(f"demo data names an unknown principal {principal_id!r}.")
    return found


async def _slot_id(services: Services, run_id: str, name: str) -> str:
    async with services.db.connection() as conn:
        run = await rows.get_run(conn, run_id)
        slots = await rows.slots_of_run(conn, run_id)
    assert run is not None
    live = [s for s in slots if s.visit == run.view.visit and s.name == name and s.live]
    if not live:
        raise errors.ValidationError(f"demo step: run {run_id} has no live slot {name!r}.")
    return live[0].id


async def _play(services: Services, run_id: str, step: dict[str, Any]) -> None:
    actor = await _principal(services, step["as"])
    if "child" in step:  # a step on the child run the run started under that label
        run_id = await _child(services, run_id, step["child"])
    if "claim" in step:
        await slot_service.claim(
            services, actor, await _slot_id(services, run_id, step["claim"]), None
        )
    if "complete" in step:
        slot_id = await _slot_id(services, run_id, step["complete"])
        payload = dict(step.get("payload", {}))
        for field, name in step.get("upload", {}).items():
            # A file field takes only real uploads by the one completing: upload one, as
            # POST /files would, and carry its reference.
            data = document_pdf(f"{name} ({run_id})")
            ref = await file_service.upload_for_slot(services, actor, slot_id, field, name, data)
            payload[field] = [ref.to_json()]
        await slot_service.complete(
            services, actor, slot_id, event=None, payload=payload, expected_version=None
        )
    if "move" in step:  # a manual move (the withdrawn hire's): the saga's undos follow
        await run_service.move(services, actor, run_id=run_id, name=step["move"], data=None)
        while await child_lane.run_due(services):
            pass


def document_pdf(title: str) -> bytes:
    """A small, valid one-page PDF showing ``title``: the demo's stand-in for a document."""
    text = title.replace("\\", "").replace("(", "").replace(")", "")[:80]
    content = f"BT /F1 14 Tf 72 720 Td ({text}) Tj ET".encode("latin-1", "replace")
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R"
        b" /Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length %d >>\nstream\n%s\nendstream" % (len(content), content),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, body)
    table = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        table,
    )
    return bytes(out)


async def _child(services: Services, run_id: str, label: str) -> str:
    """The child run ``run_id`` started under ``label``, started now if it is still to start
    (the worker's lane, run here in the demo's transaction)."""
    while await child_lane.run_due(services):
        pass
    found = [
        c
        for c in await reading.of_run(services, run_id)
        if c.label == label and not reading.is_compensation(c)
    ]
    if not found or found[0].child is None:
        raise errors.ValidationError(f"demo step: run {run_id} has no child {label!r}.")
    return found[0].child


def history(data: dict[str, Any], now: datetime) -> list[PastRun]:
    """The past runs the demo file's ``history`` plans, from a fixed seed.

    Each template is played ``count`` times: a start on a working day
    (08:00-17:00 in the history's zone) ``days_ago`` days ago (a range; default:
    from ``weeks`` weeks ago to yesterday), then each step ``after_hours`` (a
    range, real hours) after the one before, by one of its ``as`` (default:
    whoever took the step before). Only the steps due before ``now`` are
    planned: the last days' runs stay live. ``{n}`` in ids, attributes and
    payloads is the run's number, ``{date}`` in a payload the step's date and in an
    attribute the run's start date (a support ticket due the day it came in);
    ``vary`` picks an attribute's value per run.
    """
    plan = data.get("history")
    if not plan:
        return []
    rng = random.Random(plan["seed"])
    zone = ZoneInfo(plan["zone"])
    today = now.astimezone(zone).date()
    planned = []
    for template in plan["runs"]:
        first, last = template.get("days_ago", (1, 7 * plan["weeks"]))
        for n in range(1, template["count"] + 1):
            minute = rng.randrange(8 * 60, 17 * 60)
            day = today - timedelta(days=rng.randint(first, last))
            at = datetime(day.year, day.month, day.day, minute // 60, minute % 60, tzinfo=zone)
            # Nobody submits on a weekend here, nor later than now.
            while at.weekday() >= 5 or at >= now:
                at -= timedelta(days=1)
            spec = _numbered(
                {k: template[k] for k in ("workflow", "type", "started_by", "external_id")}, n
            )
            attributes = dict(template["attributes"])
            attributes.update({k: rng.choice(v) for k, v in template.get("vary", {}).items()})
            spec["attributes"] = _numbered(attributes, n, date=at.date())
            steps, actor, when = [], None, at
            for step in template["steps"]:
                when += timedelta(hours=rng.uniform(*step["after_hours"]))
                actor = rng.choice(step["as"]) if "as" in step else actor
                played = {k: v for k, v in step.items() if k not in ("as", "after_hours")}
                played["as"] = actor
                if "payload" in played:
                    played["payload"] = _numbered(played["payload"], n, date=when.date())
                if when < now:  # steps still to come stay undone: the run is live
                    steps.append((when, played))
            planned.append(PastRun(spec, at, steps))
    return planned


def _numbered(values: dict[str, Any], n: int, **more: Any) -> dict[str, Any]:
    return {k: v.format(n=n, **more) if isinstance(v, str) else v for k, v in values.items()}


async def _start(services: Services, spec: dict[str, Any]) -> str | None:
    """Start the run ``spec`` describes; its id, or None when an earlier call started it.
    With ``upsert``, the subject is sent (upsertSubject) and its type's owner starts."""
    who = await _principal(services, spec["started_by"])
    sent = {
        "subject_type": spec["type"],
        "external_id": spec["external_id"],
        "attributes": spec["attributes"],
    }
    if spec.get("upsert"):
        upserted = await owned.upsert_subject(services, who, **sent)
        return upserted.started.view.id if upserted.started is not None else None
    key = f"demo:{spec['workflow']}:{spec['external_id']}"
    result = await run_service.start_run(
        services, who, workflow=spec["workflow"], idempotency_key=key, **sent
    )
    return result.run.view.id if result.created else None


async def _in_one_transaction(
    services: Services, what: str, work: Callable[[Services], Awaitable[bool]]
) -> bool:
    """``work`` on services whose every use case writes in one transaction of ours: all of
    it commits, or none; a race lost to a running server's worker or users is run again."""

    async def once() -> bool:
        async with services.db.transaction() as conn:
            return await work(dataclasses.replace(services, db=services.db.bound(conn)))

    return await retry.run(services, what, once)


async def _seed_run(services: Services, spec: dict[str, Any]) -> bool:
    """Start a live run and play its steps, in one transaction; False if it was there."""

    async def work(inside: Services) -> bool:
        run_id = await _start(inside, spec)
        if run_id is None:
            return False
        for step in spec.get("steps", []):
            await _play(inside, run_id, step)
        return True

    return await _in_one_transaction(services, f"seed {spec['external_id']}", work)


async def _replay(services: Services, past: PastRun) -> bool:
    """Start a past run and play its steps, each at its own instant, in one transaction;
    False if it was there."""

    async def work(inside: Services) -> bool:
        at = clock.FrozenClock(past.started_at)
        then = dataclasses.replace(inside, clock=at)
        run_id = await _start(then, past.spec)
        if run_id is None:
            return False
        for when, step in past.steps:
            at.set(when)
            await _play(then, run_id, step)
        return True

    return await _in_one_transaction(services, f"replay {past.spec['external_id']}", work)


def read(principals_file: Path, runs_file: Path) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The demo's principals and runs, as read from their files."""
    data = json.loads(runs_file.read_text(encoding="utf-8"))
    return principal_service.parse_file(principals_file), data


async def seed(services: Services, records: list[dict[str, Any]], data: dict[str, Any]) -> Seeded:
    """Load the demo principals and runs; returns who exists and what was started."""
    await principal_service.load(services, records)
    started = existing = 0
    for spec in data["runs"]:
        if await _seed_run(services, spec):
            started += 1
        else:
            existing += 1
    past_started = past_existing = 0
    for past in history(data, services.clock.now()):
        if await _replay(services, past):
            past_started += 1
        else:
            past_existing += 1
    people = [await _principal(services, str(r["id"])) for r in records]
    return Seeded(people, started, existing, past_started, past_existing)
