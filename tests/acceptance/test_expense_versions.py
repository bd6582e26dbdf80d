"""Expense approval from version 1 to version 2, end to end, with real processes.

Version 1 (``examples/expense_approval.py``) is deployed (``taskflow migrate``) and
runs are parked in every state it has: finance review open and claimed, a question
to the employee, a manager approval claimed, a payment claimed, one run ended.
Version 2 (``expense_v2.py``) renames the manager's state and slot, removes the
question, adds a slot to payment and restarts payment's clock; it is deployed
alone (version 1's file is gone), the plan is printed, the runs are migrated, and
every run's state, slots, holders, clock ledgers, timers and timeline are checked.
"""

from __future__ import annotations

import dataclasses
import json
import subprocess
import uuid
from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import asyncpg
import pytest

from taskflow import clock
from taskflow.config import config
from taskflow.service.access import principals as principal_service
from taskflow.service.common import container
from taskflow.service.runs import runs as run_service
from taskflow.service.slots import slots as slot_service
from taskflow.service.versions import deployments as deployment_service
from taskflow.store.common import db
from tests.acceptance.conftest import TASKFLOW, worker_env
from tests.conftest import EXAMPLE_PRINCIPALS, T0

pytestmark = [pytest.mark.slow, pytest.mark.anyio]

WORKFLOW = "expense-approval"
V1 = str(config.PROJECT_ROOT / "examples" / "expense_approval.py")
V2 = Path(__file__).resolve().parent / "expense_v2.py"


class Processes:
    """``taskflow`` commands as processes on the test's database."""

    def __init__(self, url: str, root: Path) -> None:
        self.env = worker_env(url, root)

    def run(self, workflows: str | Path, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*TASKFLOW, *args],
            env={**self.env, "TASKFLOW_WORKFLOWS": str(workflows)},
            capture_output=True,
            text=True,
            timeout=120,
            cwd=config.PROJECT_ROOT,
            check=False,
        )


@pytest.fixture
def processes(database_url: str, tmp_path: Path) -> Processes:
    return Processes(database_url, tmp_path)


@pytest.fixture
async def v1(
    database_url: str, settings: config.Settings, frozen_clock: clock.FrozenClock
) -> AsyncIterator[container.Services]:
    """Version 1 in process (to park runs), on the database the processes use."""
    database = await db.Database.connect(database_url, min_size=1, max_size=4)
    try:
        services = container.build(
            database, dataclasses.replace(settings, workflows=(V1,)), frozen_clock
        )
        people = json.loads(EXAMPLE_PRINCIPALS.read_text())
        for person in people:  # the examples' powers, as far as this workflow goes
            powers = []
            for power in person.get("powers") or []:
                if "workflows" in power:
                    power["workflows"] = [w for w in power["workflows"] if w == WORKFLOW]
                    if not power["workflows"]:
                        continue
                    power.pop("events", None)
                    power.pop("teams", None)
                powers.append(power)
            person["powers"] = powers
        await principal_service.load(services, people)
        yield services
    finally:
        await database.close()


async def _rows(url: str, sql: str, *args: Any) -> list[dict[str, Any]]:
    conn = await asyncpg.connect(url)
    try:
        return [dict(r) for r in await conn.fetch(sql, *args)]
    finally:
        await conn.close()


async def _start(services: container.Services, ref: str, amount: float) -> str:
    app = await principal_service.get(services, "app")
    assert app is not None
    started = await run_service.start_run(
        services, app, workflow="expense-approval", subject_type="expense", external_id=ref,
        attributes={"reference": ref, "amount": amount, "currency": "GBP",
                    "submitted_by": "sid", "department": "sales", "receipts": 2},
        idempotency_key=None,
    )  # fmt: skip
    return started.run.view.id


async def _slot(url: str, run_id: str, name: str) -> str:
    (row,) = await _rows(
        url,
        "SELECT id FROM slot WHERE run = $1 AND name = $2 AND status NOT IN "
        "('cancelled', 'satisfied')",
        uuid.UUID(run_id),
        name,
    )
    return str(row["id"])


async def _act(services: container.Services, url: str, who: str, run_id: str, slot: str,
               payload: dict[str, Any] | None = None) -> None:  # fmt: skip
    person = await principal_service.get(services, who)
    assert person is not None
    slot_id = await _slot(url, run_id, slot)
    if payload is None:
        await slot_service.claim(services, person, slot_id, None)
    else:
        await slot_service.complete(
            services, person, slot_id, event=None, payload=payload, expected_version=None
        )


def _details(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else json.loads(value)


async def test_expense_approval_v1_runs_migrate_to_v2_deployed_without_v1(
    v1: container.Services, processes: Processes, database_url: str, tmp_path: Path
) -> None:
    url = database_url
    deployed = processes.run(V1, "migrate")
    assert deployed.returncode == 0, deployed.stderr

    # Park runs in every state of version 1, an hour apart.
    runs = {
        "open": await _start(v1, "EXP-1", 200.0),
        "claimed": await _start(v1, "EXP-2", 200.0),
        "question": await _start(v1, "EXP-3", 200.0),
        "manager": await _start(v1, "EXP-4", 2500.0),
        "payment": await _start(v1, "EXP-5", 300.0),
        "ended": await _start(v1, "EXP-6", 300.0),
    }
    await _act(v1, url, "fiona", runs["claimed"], "finance_review")
    await _act(v1, url, "fiona", runs["question"], "finance_review",
               {"decision": "query", "comment": "Which client?"})  # fmt: skip
    for key in ("manager", "payment"):
        await _act(v1, url, "fiona", runs[key], "finance_review", {"decision": "approve"})
    await _act(v1, url, "fiona", runs["ended"], "finance_review", {"decision": "reject"})
    await _act(v1, url, "max", runs["manager"], "manager_approval")
    await _act(v1, url, "paul", runs["payment"], "payment")
    v1.clock.advance(timedelta(hours=1))  # type: ignore[attr-defined]

    clocks_sql = (
        "SELECT s.name, c.milestone, c.started_at, c.budget_us, c.working_days, c.met_at "
        "FROM sla_clock c JOIN slot s ON s.id = c.slot WHERE c.run = $1 "
        "ORDER BY s.name, c.milestone"
    )
    before = {k: await _rows(url, clocks_sql, uuid.UUID(r)) for k, r in runs.items()}
    assert [c["milestone"] for c in before["claimed"]] == ["assigned", "finished"]
    reminders = await _rows(
        url,
        "SELECT key FROM timer WHERE run = $1 AND kind = 'reminder' AND status = 'armed'",
        uuid.UUID(runs["claimed"]),
    )
    assert reminders, "the claimed review's 75 % reminder is armed"

    # Version 2 alone, with a migration that forgets the payment state: refused, named.
    partial = tmp_path / "expense_v2_partial.py"
    partial.write_text(
        V2.read_text().replace("            payment=migration.stay(restart_clocks=True),\n", "")
    )
    refused = processes.run(partial, "migrate")
    assert refused.returncode == 1, refused.stderr
    assert "error [DEFINITION_VERSION_MISSING]" in refused.stderr
    assert (
        "'expense-approval' version 1: 5 live runs (version 2's migration has no step for "
        "state(s) payment)" in refused.stderr
    )

    # Version 2 alone, covering every state runs are parked in: the deploy goes on.
    started = processes.run(V2, "migrate")
    assert started.returncode == 0, started.stderr
    assert "DEFINITION VERSION NOT LOADED" in started.stderr
    assert (
        "'expense-approval' version 1 is not loaded: its 5 live runs wait for "
        "'taskflow runs migrate expense-approval --to 2 --apply'" in started.stderr
    )
    listed = processes.run(V2, "definitions")
    assert listed.returncode == 0, listed.stderr
    rows = [line.split() for line in listed.stdout.splitlines() if line.startswith("expense")]
    assert [(r[1], r[4], " ".join(r[5:])) for r in rows] == [
        ("1", "5", "not loaded"),
        ("2", "0", "loaded"),
    ]

    plan = processes.run(V2, "runs", "migrate", "expense-approval", "--to", "2", "--plan")
    assert plan.returncode == 0, plan.stderr
    lines = {line.split()[1]: line for line in plan.stdout.splitlines() if line.startswith("  v1")}
    assert set(lines) == {"submitted", "awaiting_answer", "manager_approval", "payment"}
    assert "2 runs  stay" in lines["submitted"]
    assert "to submitted" in lines["awaiting_answer"]
    assert (
        "stay as manager_review (slots manager_approval -> sign_off)" in lines["manager_approval"]
    )
    assert "clocks restart: assigned, finished" in lines["payment"]
    # Version 1 is not loaded: its recorded document says which slots and clocks change.
    assert "new slots open: receipts_check" in lines["payment"]
    assert "clocks stop: answer" in lines["awaiting_answer"]
    assert plan.stdout.splitlines()[-1] == "Total: to 1, stay 4"

    applied = processes.run(
        V2, "runs", "migrate", "expense-approval", "--to", "2", "--apply", "--batch", "2"
    )
    assert applied.returncode == 0, applied.stderr
    assert "in 3 batches: stay 4, to 1" in applied.stdout

    after = {k: await _rows(url, clocks_sql, uuid.UUID(r)) for k, r in runs.items()}
    state = {
        str(r["id"]): r
        for r in await _rows(url, "SELECT id, definition_version, state, status, visit FROM run")
    }

    def run_of(key: str) -> tuple[int, str, str]:
        r = state[runs[key]]
        return r["definition_version"], r["state"], r["status"]

    async def slots_of(key: str) -> list[tuple[str, str, str | None]]:
        found = await _rows(
            url,
            "SELECT name, status, holder FROM slot WHERE run = $1 ORDER BY visit, name",
            uuid.UUID(runs[key]),
        )
        return [(s["name"], s["status"], s["holder"]) for s in found]

    async def armed(key: str) -> list[tuple[str | None, str]]:
        found = await _rows(
            url,
            "SELECT s.name, t.kind FROM timer t LEFT JOIN slot s ON s.id = t.slot "
            "WHERE t.run = $1 AND t.status = 'armed' ORDER BY s.name, t.kind",
            uuid.UUID(runs[key]),
        )
        return [(t["name"], t["kind"]) for t in found]

    async def timeline(key: str) -> list[tuple[str, dict[str, Any]]]:
        found = await _rows(
            url,
            "SELECT kind, details FROM audit_event WHERE run = $1 AND at > $2 ORDER BY id",
            uuid.UUID(runs[key]),
            T0 + timedelta(hours=1),
        )
        return [(e["kind"], _details(e["details"])) for e in found]

    # Unchanged state: kept as is, holder and ledgers too; its timers planned by version 2.
    for key, holder in (("open", None), ("claimed", "fiona")):
        assert run_of(key) == (2, "submitted", "active")
        assert after[key] == before[key]
        ((name, _, held),) = await slots_of(key)
        assert (name, held) == ("finance_review", holder)
    assert ("finance_review", "reminder") in await armed("claimed")
    assert ("finance_review", "breach") in await armed("open")

    # Removed state: its slot closed as migrated, finance reviews again with fresh clocks.
    assert run_of("question") == (2, "submitted", "active")
    assert (await slots_of("question"))[-2:] == [
        ("answer", "cancelled", None),
        ("finance_review", "open", None),
    ]
    fresh = [c for c in after["question"] if c["name"] == "finance_review" and not c["met_at"]]
    assert [c["milestone"] for c in fresh] == ["assigned", "finished"]
    assert all(c["started_at"] > T0 + timedelta(hours=1) for c in fresh)
    assert {k for _, k in await armed("question")} <= {"at_risk", "breach", "reminder"}
    assert (None, "timeout") not in await armed("question")  # the 14-day timeout is gone

    # Renamed state and slot: same slot row, same holder, same ledger under the new name.
    assert run_of("manager") == (2, "manager_review", "active")
    assert (await slots_of("manager"))[-1] == ("sign_off", "claimed", "max")
    kept = [c for c in before["manager"] if c["name"] == "manager_approval"]
    renamed = [c for c in after["manager"] if c["name"] == "sign_off"]
    assert [dict(c, name="x") for c in renamed] == [dict(c, name="x") for c in kept]
    assert ("sign_off", "reminder") in await armed("manager")
    manager_lines = await timeline("manager")
    assert ("slot.renamed", "manager_approval") in [
        (kind, d.get("previous")) for kind, d in manager_lines
    ]

    # Payment: the slot kept by its holder, its clock restarted; the new slot opened.
    assert run_of("payment") == (2, "payment", "active")
    assert await slots_of("payment") == [
        ("finance_review", "satisfied", "fiona"),
        ("payment", "claimed", "paul"),
        ("receipts_check", "open", None),
    ]
    (paying,) = [c for c in after["payment"] if c["name"] == "payment"]
    (paid_before,) = [c for c in before["payment"] if c["name"] == "payment"]
    assert paying["started_at"] > paid_before["started_at"] + timedelta(hours=1)
    assert [c["name"] for c in after["payment"] if c["name"] == "receipts_check"] == [
        "receipts_check"
    ]
    payment_lines = [kind for kind, _ in await timeline("payment")]
    assert "clock.restarted" in payment_lines
    assert "slot.opened" in payment_lines

    # The ended run is untouched; every live run says on its timeline how it migrated.
    assert run_of("ended") == (1, "rejected", "completed")
    for key, step, to_state in (
        ("open", "stay", "submitted"),
        ("question", "to", "submitted"),
        ("manager", "stay", "manager_review"),
        ("payment", "stay", "payment"),
    ):
        (line,) = [d for kind, d in await timeline(key) if kind == "run.migrated"]
        assert (line["step"], line["from_version"], line["to_version"], line["to_state"]) == (
            step,
            1,
            2,
            to_state,
        )

    # Nothing is left on version 1: a second apply changes nothing, and deploys are quiet.
    again = processes.run(V2, "runs", "migrate", "expense-approval", "--to", "2", "--apply")
    assert again.returncode == 0, again.stderr
    assert "stay" not in again.stdout.split(":")[-1]
    quiet = processes.run(V2, "migrate")
    assert quiet.returncode == 0, quiet.stderr
    assert "NOT LOADED" not in quiet.stderr
    assert (
        await deployment_service.migration_plan(
            dataclasses.replace(v1, catalog=_v2_catalog()), "expense-approval", 2
        )
        == []
    )


def _v2_catalog() -> Any:
    from taskflow.service.versions import definitions

    return definitions.load([str(V2)], None)


def test_the_v2_module_loads_beside_v1() -> None:
    from taskflow.service.versions import definitions

    loaded = definitions.load([V1, str(V2)], None)
    assert sorted(d.version for d in loaded) == [1, 2]
