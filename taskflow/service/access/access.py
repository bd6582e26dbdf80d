"""Who may see and do what: the one module every read and act path calls.

The rules are pure (``taskflow.core.access.access``); this module loads what they read
(a run and its slots), raises the refusals, and keeps a per-request cache
(:class:`RequestAccess`) so nested GraphQL fields neither re-query nor re-check.
``RULES`` (``taskflow.core.access.access_rules``) lists, for every query, mutation and
object field of the schema, which of these rules guards it.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Collection, Iterable, Sequence
from typing import TypeVar

from taskflow import errors
from taskflow.core.access import access as rules
from taskflow.core.access.principals import Principal
from taskflow.core.common import parsing
from taskflow.core.definition import audience as au
from taskflow.core.definition.workflow import Definition
from taskflow.core.runs.model import RunView, SlotView
from taskflow.core.runs.statuses import RunStatus
from taskflow.service.common.container import Services
from taskflow.store.common import db
from taskflow.store.runs import runs as rows

#: What a request saw of a slot's run (``RequestAccess.seen_slot``), named for the api layer.
SeenRun = rows.RunHead

Scope = rules.Scope

T = TypeVar("T")


async def unless_hidden(found: Awaitable[T]) -> T | None:
    """What ``found`` reads, or None where it is hidden from the actor (``NotFound``): to a
    caller who may not see a thing, it looks as if it did not exist."""
    try:
        return await found
    except errors.NotFound:
        return None


def keys(principal: Principal) -> frozenset[str]:
    """The audience keys a principal carries (``user:``, ``role:``, ``group:``, ``attr:``)."""
    return principal.audience_keys


def involved(principal: Principal, mine: frozenset[str], slot: SlotView) -> bool:
    """True when the principal holds, did, could take or may delegate this slot."""
    return rules.involved(principal, slot)


def can_read_run(principal: Principal, slots: Iterable[SlotView], workflow: str = "") -> bool:
    """Leads, managers and applications where granted; others where involved in a slot."""
    return rules.may_read_run(principal, workflow, slots)


def may_raise_as_application(
    principal: Principal, workflow: str, event: str, started_by: str | None
) -> bool:
    """Whether ``principal`` may raise ``event`` as an application on a run of ``workflow``
    that ``started_by`` started (integrations act on their own runs)."""
    return rules.may_raise_as_application(principal, workflow, event, started_by)


def may_move(
    principal: Principal, definition: Definition | None, run: RunView | rows.RunHead
) -> bool:
    """True when a move of the run's current state is meant for the principal (e.g. withdraw).

    ``definition`` None (a version older than the registry, and not loaded) has no moves."""
    if run.status != RunStatus.ACTIVE or definition is None or not definition.has_state(run.state):
        return False
    mine = keys(principal)
    state = definition.state(run.state)
    return any(m.by is not None and au.compile(m.by, run.subject).admits(mine) for m in state.moves)


def may_read(
    principal: Principal,
    definition: Definition | None,
    run: RunView | rows.RunHead,
    slots: Sequence[SlotView],
) -> bool:
    """Read a run: by grant or involvement, or because one of its moves is meant for you
    (``definition``: what ``Catalog.for_reading`` gives for the run's version)."""
    return rules.may_read_run(principal, run.workflow, slots) or may_move(
        principal, definition, run
    )


def _forbidden(principal: Principal, action: str, who: str) -> errors.Forbidden:
    return errors.Forbidden(
        f"Only {who} may {action}; {principal.id!r} holds no such grant here "
        "(ask an admin to grant the power for this workflow: see docs/access.md)."
    )


def may_start(principal: Principal, workflow: str) -> bool:
    """Whether an application may start runs of ``workflow`` and update their subjects."""
    return rules.may_start(principal, workflow)


def require_start(principal: Principal, workflow: str, action: str = "start runs") -> None:
    """Applications granted ``workflow`` (and admins)."""
    if not rules.may_start(principal, workflow):
        raise _forbidden(principal, f"{action} of {workflow!r}", "applications granted it")


def require_integration(principal: Principal, action: str) -> None:
    """An application grant somewhere (the caller narrows to its workflows)."""
    if not rules.anywhere(rules.application(principal)):
        raise _forbidden(principal, action, "applications (an integration grant) and admins")


def require_cancel(
    principal: Principal, workflow: str, slots: Sequence[SlotView], started_by: str | None
) -> None:
    """Leads and managers whose grants reach the run, and the application that started it."""
    if not rules.may_cancel(principal, workflow, slots, started_by):
        if principal.is_integration and rules.may_start(principal, workflow):
            raise own_runs_only(principal, f"cancel this run of {workflow!r}")
        raise _forbidden(
            principal,
            f"cancel runs of {workflow!r}",
            "its leads, managers and the application that started the run",
        )


def own_runs_only(principal: Principal, action: str) -> errors.Forbidden:
    """The refusal of an integration acting on a run it did not start."""
    return errors.Forbidden(
        f"Application {principal.id!r} may not {action}: integrations act only on the runs "
        "they started (docs/access.md); ask the application that started it, a lead or an "
        "admin."
    )


def require_application_on_run(
    principal: Principal, workflow: str, started_by: str | None, action: str
) -> None:
    """Refuse an integration acting on a run of ``workflow`` it did not start."""
    require_start(principal, workflow, action)
    if not rules.acts_on_run(principal, workflow, started_by):
        raise own_runs_only(principal, f"{action} of a run of {workflow!r} it did not start")


def require_manage_links(
    principal: Principal, workflow: str, slot: SlotView, started_by: str | None, action: str
) -> None:
    """Refuse minting or revoking a slot's links to whom ``may_manage_links`` does not admit
    (``started_by``: who started the slot's run); an integration granted the workflow hears
    that it acts only on the runs it started."""
    if rules.may_manage_links(principal, workflow, slot, started_by):
        return
    if principal.is_integration and rules.may_start(principal, workflow):
        raise own_runs_only(principal, f"{action} the magic links of a run it did not start")
    raise errors.Forbidden(
        f"Only the slot's holder, its delegates ({slot.delegates}), leads and managers "
        f"granted {workflow!r}, and the application that started the run may {action} its "
        "magic links; claim the slot first or ask a lead."
    )


def require_add_candidate(principal: Principal, workflow: str, slot: SlotView) -> None:
    """Refuse widening a slot's candidates (``addCandidate``, an automation's escalation) to
    whom ``may_add_candidate`` does not admit."""
    if rules.may_add_candidate(principal, workflow, slot):
        return
    raise errors.Forbidden(
        f"Only the slot's delegates ({slot.delegates if slot.delegates.keys else 'none'}), "
        f"leads and managers granted {workflow!r} and admins may add candidates to it."
    )


def require_reports(principal: Principal) -> Scope:
    """The scope of the caller's reports; FORBIDDEN when it reaches nowhere."""
    found = rules.report_scope(principal)
    if not rules.anywhere(found):
        raise errors.Forbidden(
            "SLA reports are for leads, managers and admins: ask an admin for a lead or manager "
            "grant on your workflows."
        )
    return found


def require_report_workflow(found: Scope, workflow: str | None) -> None:
    """A report narrowed to a workflow the caller's grants do not reach is refused."""
    if workflow is not None and not rules.covers_workflow(found, workflow):
        raise errors.Forbidden(
            f"Your lead or manager grants do not cover the workflow {workflow!r}."
        )


def work_scope(principal: Principal, team: Sequence[str] | None) -> Scope:
    found = rules.work_scope(principal, team)
    if not rules.anywhere(found):
        raise errors.Forbidden(
            "Only leads, managers and admins (where granted) may read all work; team members "
            "may read their own team's queue (filter audience to a role or group you have, e.g. "
            "role:finance)."
        )
    return found


def may_manage_principals(principal: Principal) -> bool:
    """Admins read and change every principal (anyone reads themselves)."""
    return rules.may_manage_principals(principal)


def require_admin(principal: Principal, action: str) -> None:
    if not rules.may_manage_principals(principal):
        raise errors.Forbidden(
            f"Only principals with the 'admin' role may {action}; "
            f"{principal.id!r} has roles {list(principal.roles)}."
        )


def may_keep_timers(principal: Principal, workflow: str) -> bool:
    """Leads and managers granted ``workflow`` (and admins) see its timers and mend dead ones."""
    return rules.may_keep_timers(principal, workflow)


def timer_workflows(principal: Principal, action: str) -> frozenset[str] | None:
    """The workflows whose timers ``principal`` may see (None: all); FORBIDDEN if none."""
    found = rules.oversight(principal)
    if not rules.anywhere(found):
        raise _forbidden(principal, action, "leads, managers and admins granted a workflow")
    return rules.workflows_of(found)


def may_operate(principal: Principal, workflow: str) -> bool:
    """Leads and managers granted ``workflow`` (and admins) use the operator verbs on it."""
    return rules.may_operate(principal, workflow)


def require_operate(principal: Principal, workflow: str) -> None:
    if not rules.may_operate(principal, workflow):
        raise _forbidden(
            principal, f"operate runs of {workflow!r}", "its leads and managers, and admins"
        )


def require_agent(principal: Principal, workflow: str) -> None:
    """FORBIDDEN unless the principal opted in to agent write tools on ``workflow``
    (an ``agent`` grant, docs/access.md): checked before an agent's act, which then goes
    through the same use case and rules as anyone's."""
    if not rules.may_act_as_agent(principal, workflow):
        raise errors.Forbidden(
            f"Agent write tools are off for {principal.id!r} on {workflow!r}: an admin turns "
            f"them on with: taskflow principals agent {principal.id} --workflow {workflow} "
            "(docs/access.md, 'Agent tools')."
        )


def operate_workflows(principal: Principal, action: str) -> frozenset[str] | None:
    """The workflows ``principal`` may operate on (None: all); FORBIDDEN if none."""
    found = rules.attention_scope(principal)
    if not rules.anywhere(found):
        raise _forbidden(principal, action, "leads, managers and admins granted a workflow")
    return rules.workflows_of(found)


def require_webhooks(principal: Principal, workflows: Collection[str], action: str) -> None:
    """FORBIDDEN unless ``principal`` may point an endpoint at ``workflows`` (empty: all)."""
    if not rules.may_point_webhook_at(principal, workflows):
        reach = f"workflows {sorted(workflows)}" if workflows else "every workflow"
        raise _forbidden(
            principal, f"{action} for {reach}", "admins, and leads granted each workflow named"
        )


def manages_webhooks(principal: Principal) -> bool:
    """Whether ``principal`` may manage any webhook endpoint at all (admins, leads)."""
    return rules.anywhere(rules.webhook_scope(principal))


def may_manage_webhook(principal: Principal, owner: str, workflows: Collection[str]) -> bool:
    """Whether ``principal`` sees and changes (and reads the secret of) the endpoint owned by
    ``owner`` for ``workflows``: admins every one, a lead their own (docs/security.md)."""
    return rules.may_manage_webhook(principal, owner, workflows)


def webhook_owner_refusal(owner_id: str, owner: Principal | None, workflow: str) -> str | None:
    """Why an event of ``workflow`` is not sent to an endpoint of ``owner_id`` now (None: it
    is); the worker asks this per delivery, with the owners loaded once per batch."""
    return rules.webhook_owner_refusal(owner_id, owner, workflow)


#: Runs with their slots as loaded, by id (None: no such run), before any check.
Loaded = dict[str, "tuple[rows.RunRow, list[SlotView]] | None"]


class RequestAccess:
    """One request's access answers: each run loaded and checked once, in batches.

    Built per GraphQL request (``Context.access``); service read paths take it so a
    page of slots with nested runs costs two queries, not two per row.
    """

    def __init__(self, services: Services, actor: Principal, loaded: Loaded | None = None) -> None:
        self.services = services
        self.actor = actor
        self._runs: dict[str, tuple[rows.RunRow, list[SlotView]] | None] = {}
        self._seen: dict[str, tuple[SlotView, rows.RunHead]] = {}
        self._loading = asyncio.Lock()
        #: Runs as loaded (unchecked), shared by several actors' checks of one moment (a
        #: live batch reads a run once for every subscriber, each checked on their own).
        self._loaded = loaded

    def _check(self, run: RunView | rows.RunHead, slots: list[SlotView]) -> bool:
        # A run of a version that left the code is read like any other (docs/versions.md).
        definition = self.services.catalog.for_reading(run.workflow, run.definition_version)
        return may_read(self.actor, definition, run, slots)

    async def readable_runs(
        self, run_ids: Sequence[str], conn: db.Connection | None = None
    ) -> dict[str, tuple[rows.RunRow, list[SlotView]]]:
        """The runs among ``run_ids`` the actor may read, with all their slots."""
        # One load at a time: two resolvers of one answer (a run's slots and its steps) ask
        # at once, and the second must wait for the first's answer, not read its gap.
        async with self._loading:
            missing = [i for i in dict.fromkeys(run_ids) if i not in self._runs]
            valid = [i for i in missing if parsing.parses(uuid.UUID, i)]
            for i in missing:
                self._runs[i] = None
            shared = self._loaded if self._loaded is not None else {}
            absent = [i for i in valid if i not in shared]
            if absent:
                if conn is None:
                    async with self.services.db.connection() as own:
                        found, slots = await _load(own, absent)
                else:
                    found, slots = await _load(conn, absent)
                for i in absent:
                    shared[i] = (found[i], slots.get(i, [])) if i in found else None
            for i in valid:
                got = shared.get(i)
                if got is not None and self._check(got[0].view, got[1]):
                    self._runs[i] = got
        return {i: got for i in run_ids if (got := self._runs.get(i)) is not None}

    async def readable_run(
        self, run_id: str, conn: db.Connection | None = None
    ) -> tuple[rows.RunRow, list[SlotView]]:
        """A run and its slots, if the actor may read it; NOT_FOUND otherwise (alike)."""
        found = await self.readable_runs([run_id], conn)
        if run_id not in found:
            raise errors.NotFound(f"No run has the id {run_id!r}.")
        return found[run_id]

    def saw(self, slot: SlotView, run: rows.RunHead) -> None:
        """A slot and its run's head as this request's own write returned them, so that the
        answer is given from them (:meth:`seen_slot` checks them like a fetch by id)."""
        self._seen[slot.id] = (slot, run)

    def seen_slot(self, slot_id: str) -> tuple[SlotView, rows.RunHead] | None:
        """A slot this request wrote, with its run, if the actor may read that run on what
        is known: by grant, by a move meant for them, or involved in this very slot. The
        rule only grows with the run's slots, so a yes here is the yes a whole-run check
        gives; None otherwise (the caller fetches and checks as for any id)."""
        found = self._seen.get(slot_id)
        if found is None or not self._check(found[1], [found[0]]):
            return None
        return found

    def forget(self, run_id: str) -> None:
        """Drop a cached run (after this request changed it)."""
        self._runs.pop(run_id, None)


async def preload(services: Services, loaded: Loaded, run_ids: Sequence[str]) -> None:
    """Load the runs among ``run_ids`` not in ``loaded`` yet, with their slots, in one read
    (unchecked: each :class:`RequestAccess` over ``loaded`` checks its own actor)."""
    absent = [i for i in dict.fromkeys(run_ids) if i not in loaded and parsing.parses(uuid.UUID, i)]
    if not absent:
        return
    async with services.db.connection() as conn:
        found, slots = await _load(conn, absent)
    for i in absent:
        loaded[i] = (found[i], slots.get(i, [])) if i in found else None


async def _load(
    conn: db.Connection, run_ids: list[str]
) -> tuple[dict[str, rows.RunRow], dict[str, list[SlotView]]]:
    return await rows.get_runs(conn, run_ids), await rows.slots_of_runs(conn, run_ids)
