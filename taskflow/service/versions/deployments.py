"""Recording what was deployed, and refusing a start that would strand or silently change runs.

Every start that serves work (``serve``, ``worker``, ``migrate``, ``demo``) calls
:func:`register` after migrations: each loaded definition is compared with the
one recorded at its name and version (``core/versions/deployments.py`` decides), then
recorded. See docs/versions.md.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime

from taskflow.core.definition import DefinitionError, Problem, migrations
from taskflow.core.definition.checks import migration_checks
from taskflow.core.definition.workflow import Definition
from taskflow.core.versions import deployments, shapes
from taskflow.service.common.container import Services
from taskflow.store.versions import deployments as store
from taskflow.store.versions import run_migrations as migrating

log = logging.getLogger("taskflow.service.deployments")


def loaded(definition: Definition) -> deployments.Loaded:
    """What the registry keeps of a loaded definition."""
    return deployments.Loaded(
        definition.name, definition.version, definition.digest, definition.to_document()
    )


def declared(
    definitions: Iterable[Definition],
) -> dict[tuple[str, int], tuple[int, frozenset[str]]]:
    """Per (name, earlier version): the latest loaded version declaring a migration from it,
    and the states it has steps for."""
    found: dict[tuple[str, int], tuple[int, frozenset[str]]] = {}
    for d in sorted(definitions, key=lambda d: (d.name, d.version)):
        for m in d.migrations:
            found[(d.name, m.from_version)] = (d.version, frozenset(s for s, _ in m.steps))
    return found


def recorded_shapes(
    rows: Iterable[store.Row], workflow: str, skip: Iterable[int] = ()
) -> dict[int, shapes.Shape]:
    """The recorded versions of ``workflow`` (but ``skip``) as shapes, by version."""
    left_out = set(skip)
    return {
        r.recorded.version: shapes.from_document(r.recorded.document)
        for r in rows
        if r.recorded.name == workflow and r.recorded.version not in left_out
    }


def _check_against_recorded(
    services: Services, migrating: Iterable[deployments.Missing], rows: Sequence[store.Row]
) -> None:
    """The load checks of a migration against the earlier version, when that version is
    no longer loaded: against its recorded document instead (DEFINITION_INVALID)."""
    found: list[Problem] = []
    for m in migrating:
        if m.migrated_by is None:
            continue
        target = services.catalog.get(m.name, m.migrated_by)
        earlier = recorded_shapes(rows, m.name)
        if m.version in earlier:
            found += migration_checks.cross_problems(target, {m.version: earlier[m.version]})
    if found:
        raise DefinitionError(found)


async def register(services: Services) -> deployments.Plan:
    """Check the loaded definitions against the registry and record them, in one transaction.

    Raises :class:`~taskflow.core.versions.deployments.VersionsMissing` when live runs are on a
    version the code lacks (unless a loaded version's migration has a step for every
    state they are parked in: then it warns), and
    :class:`~taskflow.core.versions.deployments.DefinitionDrift` when a definition changed at the
    same version (unless ``TASKFLOW_ALLOW_DEFINITION_DRIFT``).
    """
    here = [loaded(d) for d in services.catalog]
    allowed = services.settings.allow_definition_drift
    now = services.clock.now()
    async with services.db.transaction() as conn:
        await store.lock(conn)
        rows = await store.recorded(conn)
        live = await store.live_runs(conn)
        keys = {(d.name, d.version) for d in services.catalog}
        missing = [key for key, n in live.items() if n > 0 and key not in keys]
        states = await migrating.live_states(conn) if missing else {}
        plan = deployments.plan(
            here, [r.recorded for r in rows], live, states, declared(services.catalog)
        )
        if plan.missing:
            raise deployments.VersionsMissing(
                deployments.missing_message(plan.missing),
                missing=[(m.name, m.version, m.live_runs) for m in plan.missing],
            )
        if plan.drifts and not allowed:
            raise deployments.DefinitionDrift(
                deployments.drift_message(plan.drifts),
                workflows=[(d.name, d.version) for d in plan.drifts],
            )
        _check_against_recorded(services, plan.migrating, rows)
        if plan.migrating:
            log.warning(
                "DEFINITION VERSION NOT LOADED: %s", deployments.migrating_message(plan.migrating)
            )
        drifted = {(d.name, d.version) for d in plan.drifts}
        if drifted:
            log.warning(
                "DEFINITION DRIFT ALLOWED: %s", deployments.drift_message(plan.drifts, allowed=True)
            )
        for definition in here:
            key = (definition.name, definition.version)
            await store.record(conn, definition, now, drift_allowed=key in drifted)
    # Runs of versions that left the code are still read: from their recorded documents.
    services.catalog.remember(r.recorded.document for r in rows)
    for definition in plan.new:
        log.info(
            "definition %s@%s first seen (%s)",
            definition.name,
            definition.version,
            definition.digest[:19],
        )
    return plan


@dataclass(frozen=True)
class Deployed:
    """A line of ``taskflow definitions``: a recorded version, its live runs, and whether
    (and how) the code loaded now defines it."""

    name: str
    version: int
    digest: str
    first_seen_at: datetime | None
    last_seen_at: datetime | None
    live_runs: int
    #: ``loaded`` (same digest), ``drifted`` (loaded, other digest), ``not loaded``,
    #: ``new`` (loaded, never recorded).
    status: str


async def listing(services: Services) -> list[Deployed]:
    """Every recorded or loaded version with its live runs, by name then version."""
    here = {(d.name, d.version): d for d in services.catalog}
    async with services.db.transaction() as conn:
        rows = await store.recorded(conn)
        live = await store.live_runs(conn)
    found: dict[tuple[str, int], Deployed] = {}
    for row in rows:
        r = row.recorded
        key = (r.name, r.version)
        definition = here.get(key)
        status = (
            "not loaded"
            if definition is None
            else ("loaded" if definition.digest == r.digest else "drifted")
        )
        found[key] = Deployed(
            r.name,
            r.version,
            r.digest,
            row.first_seen_at,
            row.last_seen_at,
            live.get(key, 0),
            status,
        )
    for key, definition in here.items():
        if key not in found:
            found[key] = Deployed(
                definition.name,
                definition.version,
                definition.digest,
                None,
                None,
                live.get(key, 0),
                "new",
            )
    for key, count in live.items():
        if key not in found:  # runs older than the registry, on a version no longer loaded
            found[key] = Deployed(key[0], key[1], "", None, None, count, "not loaded")
    return [found[key] for key in sorted(found)]


async def migration_plan(
    services: Services, workflow: str, to_version: int
) -> list[migrations.PlanLine]:
    """What ``taskflow runs migrate WORKFLOW --to VERSION`` would do to the live runs of other
    versions, per (version, state): one read, no locks (nothing is changed)."""
    target = services.catalog.get(workflow, to_version)
    loaded: dict[int, migrations.Earlier] = {
        d.version: d for d in services.catalog if d.name == workflow
    }
    async with services.db.transaction() as conn:
        counts = await store.live_by_state(conn, workflow)
        # Versions no longer loaded are planned from their recorded documents.
        missing = {v for v, _ in counts} - set(loaded)
        rows = await store.recorded(conn) if missing else []
    earlier = {**recorded_shapes(rows, workflow, skip=loaded), **loaded}
    return migrations.plan(target, counts, earlier)
