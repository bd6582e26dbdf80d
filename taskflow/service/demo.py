"""Demo data: the example principals and a dozen runs moved along by people.

Seeding is idempotent: runs start with an idempotency key of their own, and
the steps of a run are played only when it was created by this call, so
``taskflow demo`` can be run again on the same database.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from taskflow import errors
from taskflow.core.principals import Principal
from taskflow.service import principals as principal_service
from taskflow.service import runs as run_service
from taskflow.service import slots as slot_service
from taskflow.service.container import Services
from taskflow.store import runs as rows


@dataclass(frozen=True)
class Seeded:
    principals: list[Principal]
    started: int
    existing: int


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
    if "claim" in step:
        await slot_service.claim(
            services, actor, await _slot_id(services, run_id, step["claim"]), None
        )
    if "complete" in step:
        slot_id = await _slot_id(services, run_id, step["complete"])
        await slot_service.complete(
            services,
            actor,
            slot_id,
            event=None,
            payload=step.get("payload", {}),
            expected_version=None,
        )


def read(principals_file: Path, runs_file: Path) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The demo's principals and runs, as read from their files."""
    data = json.loads(runs_file.read_text(encoding="utf-8"))
    return principal_service.parse_file(principals_file), data


async def seed(services: Services, records: list[dict[str, Any]], data: dict[str, Any]) -> Seeded:
    """Load the demo principals and runs; returns who exists and what was started."""
    await principal_service.load(services, records)
    started = existing = 0
    for spec in data["runs"]:
        starter = await _principal(services, spec["started_by"])
        result = await run_service.start_run(
            services,
            starter,
            workflow=spec["workflow"],
            subject_type=spec["type"],
            external_id=spec["external_id"],
            attributes=spec["attributes"],
            idempotency_key=f"demo:{spec['workflow']}:{spec['external_id']}",
        )
        if not result.created:
            existing += 1
            continue
        started += 1
        for step in spec.get("steps", []):
            await _play(services, result.run.view.id, step)
    people = [await _principal(services, str(r["id"])) for r in records]
    return Seeded(people, started, existing)
