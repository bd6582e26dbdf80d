"""The filter of the ``runs`` list, and where a caller's access reaches runs.

Pure: the store turns a :class:`RunFilter` and a :class:`RunReach` into SQL.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from taskflow.core.access import access
from taskflow.core.access.principals import Principal
from taskflow.core.operate.attention import Reason, Windows
from taskflow.core.runs.statuses import RunStatus

#: Run statuses a filter may name.
STATUSES: tuple[str, ...] = tuple(RunStatus)


@dataclass(frozen=True)
class RunFilter:
    """Every given part must match; None matches anything."""

    workflow: str | None = None
    version: int | None = None
    state: str | None = None
    status: tuple[str, ...] | None = None
    subject_type: str | None = None
    subject_external_id: str | None = None
    correlation_key: str | None = None
    started_from: datetime | None = None
    started_before: datetime | None = None
    ended_from: datetime | None = None
    ended_before: datetime | None = None
    #: True: only runs with an item on the needs-attention list (of ``attention_reasons``
    #: when given); False: only runs without one.
    needs_attention: bool | None = None
    attention_reasons: tuple[Reason, ...] | None = None
    #: The ages the list judges by, and the workflows the caller operates (None: all);
    #: set by the service when ``needs_attention`` is.
    attention_windows: Windows | None = None
    attention_workflows: frozenset[str] | None = None
    #: Only the children of this run (its id; docs/composition.md).
    parent: str | None = None
    #: Only runs that stood in this state at this instant (effective visits, docs/history.md).
    state_at: tuple[str, datetime] | None = None


@dataclass(frozen=True)
class RunReach:
    """Which runs a caller may list (``core.access.may_read_run`` as SQL can ask it).

    ``everywhere``: every run. Otherwise runs of ``workflows`` (a grant reaching the
    whole workflow), runs with a slot of a team in ``teams`` (team grants, per
    workflow set), and runs the caller is involved in: holds or did a slot, is in
    its candidates (``keys``, minus deny) or its delegates.
    """

    everywhere: bool
    workflows: frozenset[str] = frozenset()
    teams: tuple[tuple[frozenset[str] | None, frozenset[str]], ...] = ()
    principal_id: str = ""
    keys: frozenset[str] = frozenset()


def run_reach(principal: Principal) -> RunReach:
    """Where ``principal`` reads runs: its reader scope, and where it is involved."""
    found = access.reader(principal)
    if found is None:
        return RunReach(everywhere=True)
    whole = frozenset(w for r in found if r.teams is None for w in (r.workflows or ()))
    teams = tuple((r.workflows, r.teams) for r in found if r.teams is not None)
    return RunReach(
        everywhere=False,
        workflows=whole,
        teams=teams,
        principal_id=principal.id,
        keys=principal.audience_keys,
    )
