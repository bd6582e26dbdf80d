"""The ``runs`` list use case: filtered, paged, narrowed to the runs the caller may read."""

from __future__ import annotations

import dataclasses
from datetime import datetime

from taskflow import errors
from taskflow.core.access.principals import Principal
from taskflow.core.runs import run_filter
from taskflow.service.access import access
from taskflow.service.common.container import Services
from taskflow.service.history import history
from taskflow.service.operate import attention as attention_service
from taskflow.store.runs import run_list
from taskflow.store.runs.runs import RunRow

MAX_FIRST = 100


async def runs(
    services: Services,
    actor: Principal,
    f: run_filter.RunFilter,
    *,
    first: int,
    after: tuple[datetime, str] | None,
    checked: access.RequestAccess | None = None,
) -> tuple[list[RunRow], int, bool]:
    """(runs, total, has next page): leads, managers and applications see the runs their
    grants reach; anyone sees the runs they are involved in (``core.access.may_read_run``).

    SQL narrows by grants and involvement; the page's runs are then checked exactly, as
    ``run(id:)`` checks them, in one batch that also primes ``checked`` (this request's
    cache) so nested ``Run.slots``, ``moves`` and the like cost no further queries. A run
    SQL admits but a residual candidate rule refuses drops out of the page (rare; the
    total counts it).
    """
    if not 0 < first <= MAX_FIRST:
        raise errors.ValidationError(
            f"first must be between 1 and {MAX_FIRST}; got {first}.", field="first"
        )
    f = prepared(services, actor, f)
    reach = run_filter.run_reach(actor)
    async with services.db.connection() as conn:
        found, total = await run_list.runs(conn, f=f, reach=reach, after=after, limit=first + 1)
        page = found[:first]
        if page:
            checked = checked or access.RequestAccess(services, actor)
            readable = await checked.readable_runs([r.view.id for r in page], conn)
            page = [r for r in page if r.view.id in readable]
    return page, total, len(found) > first


def prepared(services: Services, actor: Principal, f: run_filter.RunFilter) -> run_filter.RunFilter:
    """``f`` checked (workflow, statuses) and completed with what its needs-attention part
    is judged by: the list's windows and scope (admins, and leads and managers where
    granted; FORBIDDEN for anyone else)."""
    if f.workflow is not None and not services.catalog.has_version(f.workflow, f.version):
        services.catalog.get(f.workflow, f.version)  # NOT_FOUND, naming the versions there are
    for status in f.status or ():
        if status not in run_filter.STATUSES:
            raise errors.ValidationError(
                f"Unknown status {status!r}: use one of {', '.join(run_filter.STATUSES)}.",
                field="status",
            )
    if f.state_at is not None:
        if f.workflow is None:
            raise errors.ValidationError(
                "A stateAt filter needs a workflow (state names are a workflow's): add "
                "filter.workflow.",
                field="stateAt",
            )
        history.check_instant(services, f.state_at[1], f.workflow)
    if f.attention_reasons and f.needs_attention is None:
        f = dataclasses.replace(f, needs_attention=True)
    if f.needs_attention is None:
        return f
    return dataclasses.replace(
        f,
        attention_windows=attention_service.windows(services),
        attention_workflows=access.operate_workflows(actor, "filter runs by needs attention"),
    )
