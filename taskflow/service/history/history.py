"""History use cases: a run's visits and its state at an instant, counts per state at an
instant, and the retention check every question about the past goes through.

docs/history.md. A run's own history is read from its timeline (the caller was already
allowed to read the run: these are fields of ``Run``); questions across runs read the
state spans the timeline's trigger keeps (``store/history/spans.py``).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from taskflow import errors
from taskflow.core.access import access as rules
from taskflow.core.access.principals import Principal
from taskflow.core.history import instants, visits
from taskflow.core.operate import retention
from taskflow.service.access import access
from taskflow.service.common.container import Services
from taskflow.store.history import spans


async def run_visits(services: Services, run_id: str, *, effective: bool) -> list[visits.Visit]:
    """The run's visits, oldest first: every one (literal) or those standing after undos."""
    async with services.db.reading() as conn:
        lines = await spans.run_lines(conn, run_id)
    found = visits.visits(lines, effective=effective)
    return visits.standing(found) if effective else found


async def run_state_at(
    services: Services, run_id: str, at: datetime, *, effective: bool
) -> visits.Visit | None:
    """The visit the run was in at ``at`` (None: not started yet, or cancelled by then)."""
    instants.check(at, now=services.clock.now(), kept=None)
    async with services.db.reading() as conn:
        lines = await spans.run_lines(conn, run_id)
    return visits.state_at(lines, at, effective=effective)


def kept(services: Services, workflow: str | None) -> timedelta | None:
    """How long the ended runs asked about are kept: the workflow's retention (its latest
    version's), or the shortest of all loaded workflows' when none is named."""
    default = services.settings.retention_days
    if workflow is not None:
        return retention.age(services.catalog.get(workflow).retention, default)
    ages = [retention.age(d.retention, default) for d in services.catalog.latest()]
    return instants.shortest([*ages, retention.age(None, default)])


def check_instant(services: Services, at: datetime, workflow: str | None) -> None:
    """Refuse an instant in the future or before the runs kept (``OutsideRetention``)."""
    instants.check(at, now=services.clock.now(), kept=kept(services, workflow))


@dataclass(frozen=True)
class StateCount:
    """How many runs of a workflow stood in ``state`` at the instant asked."""

    state: str
    runs: int


async def state_counts(
    services: Services, actor: Principal, workflow: str, at: datetime
) -> list[StateCount]:
    """Every state of the workflow's latest version (and any other a run stood in) with the
    runs there at ``at``, by the effective reading; leads and managers of the whole workflow."""
    found = access.require_reports(actor)
    if not rules.covers_whole_workflow(found, workflow):
        raise errors.Forbidden(
            f"Counts cover every run of {workflow!r}: they need a lead or manager grant on the "
            "whole workflow (not narrowed to teams)."
        )
    definition = services.catalog.get(workflow)  # NOT_FOUND names the workflows there are
    check_instant(services, at, workflow)
    async with services.db.reading() as conn:
        counted = dict(await spans.state_counts(conn, workflow, at))
    names = [s.name for s in definition.states]
    names += sorted(n for n in counted if n not in names)
    return [StateCount(n, counted.get(n, 0)) for n in names]
