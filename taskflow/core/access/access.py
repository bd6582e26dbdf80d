"""Who may see and do what: the pure rules every read and act path asks.

Powers are granted per workflow (and optionally per team) on the principal
(``Principal.powers``, see ``docs/access.md``); ``admin`` is the one global
role. A role named ``lead``, ``manager`` or ``integration`` without a grant is
only an audience key (candidate rules may name it): it reaches nothing.

A *scope* is where a power reaches: ``None`` means everywhere (admin, or a
grant naming neither workflows nor teams), a tuple of :class:`Reach` means
"any of these", and ``()`` means nowhere. The service layer turns scopes into
SQL conditions (``store.queries.scope_sql``) and calls the predicates here on
rows it loaded; resolvers call the service, never decide themselves.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass

from taskflow.core.access.principals import AGENT, INTEGRATION, LEAD, MANAGER, Principal
from taskflow.core.definition import audience as au
from taskflow.core.runs.model import SlotView
from taskflow.core.runs.statuses import SlotStatus
from taskflow.core.workspaces.ids import DEFAULT

#: The powers that oversee work: read, board, report, cancel, manage links.
OVERSIGHT = (LEAD, MANAGER)
#: The power of applications: start runs, update subjects, raise events, read the outbox.
APPLICATION = (INTEGRATION,)


@dataclass(frozen=True)
class Reach:
    """Where one grant reaches: these workflows (None: all), these teams (None: all)."""

    workflows: frozenset[str] | None = None
    teams: frozenset[str] | None = None

    def covers_workflow(self, workflow: str) -> bool:
        return self.workflows is None or workflow in self.workflows

    def covers_slot(self, workflow: str, audience_keys: Collection[str]) -> bool:
        """A slot of ``workflow`` whose candidates carry ``audience_keys``."""
        return self.covers_workflow(workflow) and (
            self.teams is None or not self.teams.isdisjoint(audience_keys)
        )


#: None: everywhere; otherwise the reaches of the grants (empty: nowhere).
Scope = tuple[Reach, ...] | None
EVERYWHERE: Scope = None
NOWHERE: Scope = ()


def scope(principal: Principal, powers: Iterable[str]) -> Scope:
    """Where ``principal`` holds any of ``powers``."""
    if principal.is_admin:
        return EVERYWHERE
    wanted = set(powers)
    reaches = []
    for grant in principal.powers:
        if grant.power not in wanted:
            continue
        reach = Reach(
            frozenset(grant.workflows) if grant.workflows is not None else None,
            frozenset(grant.teams) if grant.teams is not None else None,
        )
        if reach.workflows is None and reach.teams is None:
            return EVERYWHERE
        reaches.append(reach)
    return tuple(dict.fromkeys(reaches))


def may_act_as_agent(principal: Principal, workflow: str) -> bool:
    """Whether the principal opted in to agent write tools on ``workflow``: an explicit
    ``agent`` grant only. Unlike every other power, the admin role does not imply it: an
    agent acting for an admin is a choice the admin makes, not a default."""
    for grant in principal.powers:
        if grant.power == AGENT and (grant.workflows is None or workflow in grant.workflows):
            return True
    return False


def oversight(principal: Principal) -> Scope:
    """Where the principal is a lead or manager."""
    return scope(principal, OVERSIGHT)


def application(principal: Principal) -> Scope:
    """Where the principal acts as an application (teams do not narrow applications)."""
    found = scope(principal, APPLICATION)
    if found is None:
        return None
    return tuple(dict.fromkeys(Reach(r.workflows, None) for r in found))


def reader(principal: Principal) -> Scope:
    """Where the principal reads every run and slot: oversight and application together."""
    return union(oversight(principal), application(principal))


def union(a: Scope, b: Scope) -> Scope:
    if a is None or b is None:
        return None
    return tuple(dict.fromkeys(a + b))


def anywhere(found: Scope) -> bool:
    """True when the scope reaches at least one workflow."""
    return found is None or bool(found)


def covers_workflow(found: Scope, workflow: str) -> bool:
    return found is None or any(r.covers_workflow(workflow) for r in found)


def covers_whole_workflow(found: Scope, workflow: str) -> bool:
    """True when the scope reaches every slot of ``workflow`` (no team narrows it)."""
    return found is None or any(r.covers_workflow(workflow) and r.teams is None for r in found)


def covers_slot(found: Scope, workflow: str, slot: SlotView) -> bool:
    return found is None or any(r.covers_slot(workflow, slot.audience.keys) for r in found)


def covers_run(found: Scope, workflow: str, slots: Iterable[SlotView]) -> bool:
    """A run is reached when its workflow is, or (team grants) one of its slots is."""
    if covers_whole_workflow(found, workflow):
        return True
    return any(covers_slot(found, workflow, s) for s in slots)


def workflows_of(found: Scope) -> frozenset[str] | None:
    """The workflows a scope names (None: it reaches all of them)."""
    if found is None or any(r.workflows is None for r in found):
        return None
    return frozenset(w for r in found for w in (r.workflows or ()))


# -- the questions ---------------------------------------------------------------------------------


def involved(principal: Principal, slot: SlotView) -> bool:
    """True when the principal holds, did, could take or may delegate this slot."""
    mine = principal.audience_keys
    return (
        slot.holder == principal.id
        or slot.satisfied_by == principal.id
        or slot.audience.admits(mine)
        or (bool(slot.delegates.keys) and slot.delegates.admits(mine))
    )


def may_read_run(principal: Principal, workflow: str, slots: Iterable[SlotView]) -> bool:
    """Leads, managers and applications where their grants reach; others where involved."""
    slots = list(slots)
    return covers_run(reader(principal), workflow, slots) or any(
        involved(principal, s) for s in slots
    )


def may_see_slot(principal: Principal, workflow: str, slot: SlotView) -> bool:
    """Read without a look at the whole run: involved in it, or a grant reaches it."""
    return involved(principal, slot) or covers_slot(reader(principal), workflow, slot)


def may_manage_links(
    principal: Principal, workflow: str, slot: SlotView, started_by: str | None
) -> bool:
    """Mint and revoke a slot's links: its holder, its delegates, leads and managers whose
    grants reach the slot, and the application that started its run (``started_by``,
    :func:`acts_on_run`): an integration's grant on the workflow alone is not enough."""
    if slot.holder == principal.id:
        return True
    if bool(slot.delegates.keys) and slot.delegates.admits(principal.audience_keys):
        return True
    return covers_slot(oversight(principal), workflow, slot) or acts_on_run(
        principal, workflow, started_by
    )


def may_add_candidate(principal: Principal, workflow: str, slot: SlotView) -> bool:
    """Add a candidate to a live slot (``addCandidate``; an automation's ``add_candidate``
    and ``escalate``, as their author): its delegates, leads and managers whose grants
    reach the slot, and admins. Candidates and holders do not widen their own slot."""
    if bool(slot.delegates.keys) and slot.delegates.admits(principal.audience_keys):
        return True
    return covers_slot(oversight(principal), workflow, slot)


def may_read_links(
    principal: Principal, workflow: str, slot: SlotView, started_by: str | None
) -> bool:
    """Read a slot's links and their recipients: who may manage them (``started_by``: who
    started the run), and the people involved in the slot once it is open (a candidate of a
    pending slot reads none)."""
    if may_manage_links(principal, workflow, slot, started_by):
        return True
    return slot.status != SlotStatus.PENDING and involved(principal, slot)


def may_cancel(
    principal: Principal, workflow: str, slots: Iterable[SlotView], started_by: str | None
) -> bool:
    """Leads, managers whose grants reach the run, and the application that started it."""
    return covers_run(oversight(principal), workflow, list(slots)) or acts_on_run(
        principal, workflow, started_by
    )


def acts_on_run(principal: Principal, workflow: str, started_by: str | None) -> bool:
    """The one rule of applications acting on a run (cancel, update its subject, raise its
    events): admins on every run; an integration granted the workflow on the runs it
    started (``started_by``), not on those another application or person started."""
    if principal.is_admin:
        return True
    return started_by == principal.id and may_start(principal, workflow)


def may_start(principal: Principal, workflow: str) -> bool:
    """Applications granted the workflow start its runs and update their subjects."""
    return covers_workflow(application(principal), workflow)


def may_raise_as_application(
    principal: Principal, workflow: str, event: str, started_by: str | None
) -> bool:
    """The one place that says whether ``principal`` raises ``event`` on a run of
    ``workflow`` started by ``started_by`` as an application: admins always; integrations
    granted the workflow, and the event when the grant names events, on the runs they
    started (:func:`acts_on_run`). Staff raise events as candidates, not through this."""
    if principal.is_admin:
        return True
    if not acts_on_run(principal, workflow, started_by):
        return False
    for grant in principal.powers:
        if grant.power != INTEGRATION:
            continue
        if grant.workflows is not None and workflow not in grant.workflows:
            continue
        if grant.events is not None and event not in grant.events:
            continue
        return True
    return False


def may_read_notification(principal: Principal, recipient: str, workflow: str | None) -> bool:
    """One's own notifications; an application's granted workflows' whole outbox."""
    if recipient == principal.id:
        return True
    found = application(principal)
    return found is None or (workflow is not None and covers_workflow(found, workflow))


def may_manage_principals(principal: Principal) -> bool:
    return principal.is_admin


def is_deployment_admin(principal: Principal) -> bool:
    """An admin of the default workspace: the one who runs the installation (manages
    workspaces, sees its database's health). A tenant's admin is not: they learn no other
    workspace's id and nothing of the shared database. ('' is a principal not stored yet,
    created in the default workspace.)"""
    return principal.is_admin and principal.workspace in ("", DEFAULT)


def work_scope(principal: Principal, team: Collection[str] | None) -> Scope:
    """Where ``work`` lists slots: a team member's own team queue (``team``, the audience
    filter, names only keys they carry) everywhere; otherwise the reader scope
    (``NOWHERE``: refused)."""
    if team and set(team) <= (principal.audience_keys - {au.ANY_KEY}):
        return EVERYWHERE
    return reader(principal)


def may_keep_timers(principal: Principal, workflow: str) -> bool:
    """Timers of ``workflow`` (their errors too), and mending dead ones: its leads and
    managers (a team grant reaches the workflow's timers), and admins."""
    return covers_workflow(oversight(principal), workflow)


def may_operate(principal: Principal, workflow: str) -> bool:
    """Operator verbs (goto, clocks by hand, reassigning held work, rescheduling timers) and
    the needs-attention list of ``workflow``: its leads and managers, and admins."""
    return covers_workflow(oversight(principal), workflow)


def webhook_scope(principal: Principal) -> Scope:
    """Where the principal manages webhook endpoints: admins everywhere, leads where granted."""
    return scope(principal, (LEAD,))


def may_point_webhook_at(principal: Principal, workflows: Collection[str]) -> bool:
    """An endpoint receiving events of ``workflows`` (empty: of every workflow): admins; leads
    granted each of those workflows whole (a team grant would leak other teams' slots)."""
    found = webhook_scope(principal)
    if found is None:
        return True
    return bool(workflows) and all(covers_whole_workflow(found, w) for w in workflows)


def may_manage_webhook(principal: Principal, owner: str, workflows: Collection[str]) -> bool:
    """See, change, rotate, replay, delete an endpoint (and read its secret): admins, every
    endpoint; a lead, only an endpoint they own (created) and may still point at its
    ``workflows``. An endpoint an admin created is never a lead's, whatever their grants."""
    if principal.is_admin:
        return True
    return principal.id == owner and may_point_webhook_at(principal, workflows)


#: Why a delivery was not sent (``webhook_owner_refusal``): the codes its log line starts with.
OWNER_DEACTIVATED = "owner-deactivated"
OWNER_LOST_ACCESS = "owner-lost-access"


def webhook_owner_refusal(owner_id: str, owner: Principal | None, workflow: str) -> str | None:
    """Why an event of ``workflow`` is not sent to an endpoint owned by ``owner_id`` (loaded
    as ``owner``, None when no such principal) at send time; None when it is. An endpoint
    is its owner's standing read: it carries a workflow's events only while its owner is
    active and may still point an endpoint at that workflow (``may_point_webhook_at``)."""
    if owner is None or not owner.active:
        return (
            f"{OWNER_DEACTIVATED}: the endpoint's owner {owner_id!r} is deactivated; "
            "nothing is sent until an admin activates them again"
        )
    if not may_point_webhook_at(owner, (workflow,)):
        return (
            f"{OWNER_LOST_ACCESS}: the endpoint's owner {owner_id!r} is no longer granted "
            f"{workflow!r} whole (lead, or admin); its events are not sent to it"
        )
    return None


def may_manage_automations(principal: Principal, workflow: str) -> bool:
    """Create, validate, publish, pause, resume and simulate automations of ``workflow``
    (docs/automations.md): admins, and leads granted the workflow whole (a team grant would
    let a rule act on other teams' runs). An automation acts with its author's powers: the
    worker asks this again for the author before each action, so a lead who loses the grant
    stops their automations acting."""
    return covers_whole_workflow(scope(principal, (LEAD,)), workflow)


def attention_scope(principal: Principal) -> Scope:
    """Where ``needsAttention`` lists items: leads and managers where granted, admins."""
    return oversight(principal)


def report_scope(principal: Principal) -> Scope:
    """SLA reports and the at-risk list: leads and managers where granted."""
    return oversight(principal)
