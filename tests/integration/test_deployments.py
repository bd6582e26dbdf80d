"""Start-up against the registry of deployed definitions: drift refused (or allowed), versions
with live runs that the code lacks refused with their counts."""

from __future__ import annotations

import dataclasses
from datetime import timedelta
from pathlib import Path

import pytest

from taskflow import clock, migration
from taskflow.config import config
from taskflow.core.definition import DefinitionError
from taskflow.core.versions import deployments as core
from taskflow.service.access import principals as principal_service
from taskflow.service.common import container
from taskflow.service.runs import runs as run_service
from taskflow.service.versions import definitions, deployments, run_migrations
from taskflow.store.common import db

pytestmark = pytest.mark.anyio

VERSIONS = Path(__file__).resolve().parents[1] / "api" / "version_workflows.py"


@pytest.fixture
async def versioned(
    database_url: str, settings: config.Settings, frozen_clock: clock.FrozenClock
) -> object:
    with_ours = dataclasses.replace(settings, workflows=(str(VERSIONS),))
    database = await db.Database.connect(database_url, min_size=1, max_size=4)
    try:
        services = container.build(database, with_ours, frozen_clock)
        await principal_service.load(
            services,
            [{"id": "app", "display_name": "App", "roles": ["integration"],
              "powers": [{"power": "integration"}]}],
        )  # fmt: skip
        yield services
    finally:
        await database.close()


def _with(services: container.Services, *defs: object, allow: bool = False) -> container.Services:
    return dataclasses.replace(
        services,
        catalog=definitions.Catalog(list(defs)),  # type: ignore[arg-type]
        settings=dataclasses.replace(services.settings, allow_definition_drift=allow),
    )


async def _start(services: container.Services, external_id: str, version: int) -> None:
    app = await principal_service.get(services, "app")
    assert app is not None
    await run_service.start_run(
        services,
        app,
        workflow="leave-request",
        version=version,
        subject_type="leave",
        external_id=external_id,
        attributes={},
        idempotency_key=None,
    )


async def _three_runs(versioned: container.Services) -> None:
    """L-1 and L-2 on version 1, L-3 on version 2."""
    for external_id, version in (("L-1", 1), ("L-2", 1), ("L-3", 2)):
        await _start(versioned, external_id, version)


async def test_first_start_records_every_loaded_definition_once(
    versioned: container.Services,
) -> None:
    first = await deployments.register(versioned)
    assert [(d.name, d.version) for d in first.new] == [("leave-request", 1), ("leave-request", 2)]
    versioned.clock.advance(timedelta(minutes=5))  # type: ignore[attr-defined]
    again = await deployments.register(versioned)
    assert again.new == ()
    assert again.drifts == ()
    listed = await deployments.listing(versioned)
    assert [(d.version, d.status) for d in listed] == [(1, "loaded"), (2, "loaded")]
    assert all(d.first_seen_at < d.last_seen_at for d in listed if d.first_seen_at)  # type: ignore[operator]


async def test_a_definition_changed_at_the_same_version_is_refused_with_a_diff(
    versioned: container.Services,
) -> None:
    await deployments.register(versioned)
    v1 = versioned.catalog.get("leave-request", 1)
    v2 = versioned.catalog.get("leave-request", 2)
    edited = dataclasses.replace(v2, description="Now also checks the balance twice.")
    with pytest.raises(core.DefinitionDrift) as refused:
        await deployments.register(_with(versioned, v1, edited))
    message = refused.value.message
    assert "'leave-request' version 2 changed since it was deployed" in message
    assert "bump the version" in message
    assert '+  "description": "Now also checks the balance twice."' in message
    # Nothing was recorded: the registry still holds the deployed document.
    listed = {d.version: d for d in await deployments.listing(versioned)}
    assert listed[2].digest == v2.digest


async def test_the_drift_setting_lets_it_start_and_replaces_the_recorded_document(
    versioned: container.Services, caplog: pytest.LogCaptureFixture
) -> None:
    await deployments.register(versioned)
    v1 = versioned.catalog.get("leave-request", 1)
    edited = dataclasses.replace(versioned.catalog.get("leave-request", 2), description="x")
    drifted = _with(versioned, v1, edited, allow=True)
    plan = await deployments.register(drifted)
    assert [(d.name, d.version) for d in plan.drifts] == [("leave-request", 2)]
    assert "DEFINITION DRIFT ALLOWED" in caplog.text
    listed = {d.version: d for d in await deployments.listing(drifted)}
    assert (listed[2].digest, listed[2].status) == (edited.digest, "loaded")
    # The next start without the setting accepts the edited definition as deployed.
    await deployments.register(_with(versioned, v1, edited))


async def test_a_version_with_live_runs_missing_from_the_code_is_refused_with_counts(
    versioned: container.Services,
) -> None:
    await _three_runs(versioned)
    await deployments.register(versioned)
    # Version 2 without its declared migration: nothing says what becomes of those runs.
    v2 = dataclasses.replace(versioned.catalog.get("leave-request", 2), migrations=())
    only_v2 = _with(versioned, v2)
    with pytest.raises(core.VersionsMissing) as refused:
        await deployments.register(only_v2)
    assert "'leave-request' version 1: 2 live runs" in refused.value.message
    assert "ExpenseApprovalV1" in refused.value.message
    assert refused.value.facts["missing"] == [("leave-request", 1, 2)]
    listed = {d.version: d for d in await deployments.listing(only_v2)}
    assert (listed[1].live_runs, listed[1].status) == (2, "not loaded")


async def test_a_missing_version_is_let_go_when_a_migration_covers_every_parked_state(
    versioned: container.Services, caplog: pytest.LogCaptureFixture
) -> None:
    await _start(versioned, "L-1", 1)
    await _start(versioned, "L-2", 1)
    await deployments.register(versioned)
    # Version 2 declares review=stay: both runs are parked in review, so the start goes on.
    only_v2 = _with(versioned, versioned.catalog.get("leave-request", 2))
    plan = await deployments.register(only_v2)
    assert plan.missing == ()
    assert [(m.version, m.live_runs, m.migrated_by) for m in plan.migrating] == [(1, 2, 2)]
    assert "DEFINITION VERSION NOT LOADED" in caplog.text
    assert "taskflow runs migrate leave-request --to 2 --apply" in caplog.text
    # Version 1's rules are not needed to migrate its runs: both stay in review, on 2.
    applied = await run_migrations.apply(only_v2, "leave-request", 2)
    assert applied.by_kind == {"stay": 2}
    async with versioned.db.connection() as conn:
        rows = await conn.fetch("SELECT definition_version, state FROM run")
    assert sorted((r["definition_version"], r["state"]) for r in rows) == [
        (2, "review"),
        (2, "review"),
    ]
    assert (await deployments.register(only_v2)).migrating == ()
    # With version 1 gone, its recorded document stands in for the load checks: a stay
    # that would lose the review slot is refused at start.
    async with versioned.db.transaction() as conn:
        await conn.execute("UPDATE run SET definition_version = 1")
    bad = dataclasses.replace(
        versioned.catalog.get("leave-request", 2),
        migrations=(migration.from_version(1, review=migration.stay("approved")),),
    )
    with pytest.raises(DefinitionError) as invalid:
        await deployments.register(_with(versioned, bad, allow=True))
    assert invalid.value.codes == ("MIGRATION_SLOTS",)
    # A run parked in a state the migration has no step for strands it: refused, named.
    async with versioned.db.transaction() as conn:
        await conn.execute(
            "UPDATE run SET state = 'hr_check' WHERE id = (SELECT id FROM run LIMIT 1)"
        )
    with pytest.raises(core.VersionsMissing) as refused:
        await deployments.register(only_v2)
    assert (
        "'leave-request' version 1: 2 live runs (version 2's migration has no step for "
        "state(s) hr_check)" in refused.value.message
    )


async def test_a_version_whose_runs_all_ended_may_leave_the_code(
    versioned: container.Services,
) -> None:
    await _start(versioned, "L-1", 1)
    async with versioned.db.transaction() as conn:
        await conn.execute("UPDATE run SET status = 'completed', ended_at = now()")
    plan = await deployments.register(_with(versioned, versioned.catalog.get("leave-request", 2)))
    assert plan.missing == ()


async def test_the_migration_plan_counts_live_runs_per_version_and_state(
    versioned: container.Services,
) -> None:
    await _three_runs(versioned)
    lines = await deployments.migration_plan(versioned, "leave-request", 2)
    assert [
        (x.from_version, x.state, x.runs, x.step.describe() if x.step else None) for x in lines
    ] == [(1, "review", 2, "stay")]
    assert lines[0].effect == "state, slots, holders and clock ledgers kept"
