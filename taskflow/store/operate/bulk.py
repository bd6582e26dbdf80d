"""bulkOperate's runs: the ``runs`` list's filter and reach, counted, and the runs a verb
would take in (started, id) order (statements in ``operate/bulk.sql``).

The filter and reach are the runs list's (``store/runs/run_list.py``), composed by the
builder into the statements' ``/*:where*/``; the statements add the operator's
workflows and what the verb needs of a run (:data:`NEEDS`).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final

from taskflow.core.runs.run_filter import RunFilter, RunReach
from taskflow.store.common import db, sql
from taskflow.store.common.sql_builder import Statement
from taskflow.store.runs import run_list

SQL = sql.statements("operate/bulk")

#: What a verb needs of a run, as the statements name it: a live run; a live slot's unmet
#: clock running (pauseClocks acts on those) or paused (resumeClocks); a dead timer.
NEEDS: Final = frozenset({"active", "running_clock", "paused_clock", "dead_timer"})


@dataclass(frozen=True)
class Counts:
    """How many runs the filter matches among those the caller reads, how many of them
    lie in workflows the caller operates, how many of those the verb applies to, and how
    many of those come after a given run."""

    matched: int
    operable: int
    applicable: int
    beyond: int


@dataclass(frozen=True)
class Selection:
    """The runs a bulk operation looks at: the runs list's filter and the caller's reach,
    the workflows the caller operates (None: all) and what the verb needs of a run
    (:data:`NEEDS`)."""

    f: RunFilter
    reach: RunReach
    workflows: frozenset[str] | None
    needs: str

    def __post_init__(self) -> None:
        if self.needs not in NEEDS:
            raise ValueError(f"needs must be one of {sorted(NEEDS)}, not {self.needs!r}")


def _statement(
    base: str,
    selection: Selection,
    after: tuple[datetime, str] | None,
    limit: int | None = None,
) -> tuple[str, list[Any]]:
    """Statement ``base`` (of ``operate/bulk.sql``) with the runs filter and reach at its
    ``/*:where*/``, and its parameters (``limit``: the take's ``$5``)."""
    workflows, needs = selection.workflows, selection.needs
    args: list[Any] = [
        sorted(workflows) if workflows is not None else None,
        needs,
        after[0] if after is not None else None,
        uuid.UUID(after[1]) if after is not None else None,
    ]
    if limit is not None:
        args.append(limit)  # $5
    st = Statement(base, *args)
    return run_list.run_reach(run_list.run_filters(st, selection.f), selection.reach).build()


async def counts(
    conn: db.Connection, selection: Selection, *, beyond: tuple[datetime, str] | None
) -> Counts:
    """The counts (one statement); ``beyond`` counts the applicable runs after that run."""
    text, args = _statement(SQL["counts"], selection, beyond)
    row = await conn.fetchrow(text, *args)
    assert row is not None
    return Counts(
        int(row["matched"]), int(row["operable"]), int(row["applicable"]), int(row["beyond"])
    )


async def take(
    conn: db.Connection, selection: Selection, *, after: tuple[datetime, str] | None, limit: int
) -> list[tuple[str, datetime]]:
    """Up to ``limit`` (run, started) the verb applies to, oldest first (started, id), after
    the run ``after`` names."""
    text, args = _statement(SQL["take"], selection, after, limit)
    found = await conn.fetch(text, *args)
    return [(str(r["id"]), r["started_at"]) for r in found]


async def dead_timers(conn: db.Connection, run_ids: list[str]) -> list[tuple[str, int]]:
    """(run, timer) of the dead timers of ``run_ids``."""
    found = await conn.fetch(SQL["dead_timers"], [uuid.UUID(r) for r in run_ids])
    return [(str(r["run"]), int(r["id"])) for r in found]
