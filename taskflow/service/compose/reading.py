"""Reading child runs: a run's children and its parent, for whoever may read the run.

A child is listed to whoever may read its parent (its label, status and outcome); the
child run itself, and a parent run, are shown only to whoever may read *that* run:
powers are per workflow (docs/composition.md, "Who may do what").
"""

from __future__ import annotations

from taskflow.core.access.principals import Principal
from taskflow.core.compose import compose
from taskflow.service.access import access
from taskflow.service.common.container import Services
from taskflow.store.compose import children as rows

#: A child of a run, as stored.
ChildRow = rows.ChildRow


def is_compensation(row: rows.ChildRow) -> bool:
    """Whether the row is a saga step's compensation rather than a child the parent started."""
    return compose.compensates(row.subject) is not None


def attempt(row: rows.ChildRow) -> int:
    """Which attempt of its step's compensation the row is (1 for a step)."""
    return compose.attempts(row.subject)[0]


async def children_of(
    services: Services,
    actor: Principal,
    run_id: str,
    checked: access.RequestAccess | None = None,
) -> list[rows.ChildRow]:
    """The run's children in the order they were made; NOT_FOUND unless the run is readable."""
    await (checked or access.RequestAccess(services, actor)).readable_run(run_id)
    return await of_run(services, run_id)


async def of_run(services: Services, run_id: str) -> list[rows.ChildRow]:
    """The run's children, for taskflow's own use (the demo): no access check."""
    async with services.db.connection() as conn:
        return await rows.of_parents(conn, [run_id])


async def parent_of(
    services: Services,
    actor: Principal,
    run_id: str,
    checked: access.RequestAccess | None = None,
) -> rows.ChildRow | None:
    """The row naming the run as a child (its parent and label), if any; NOT_FOUND unless
    the run is readable (whether the caller may read the parent is the caller's to ask)."""
    await (checked or access.RequestAccess(services, actor)).readable_run(run_id)
    async with services.db.connection() as conn:
        found = await rows.parents_of(conn, [run_id])
    return found[0] if found else None
