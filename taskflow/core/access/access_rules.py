"""The access rule table: which rule guards every query, mutation and object field.

``RULES`` names each rule (``docs/access.md`` has the same table in words);
``FIELDS`` (kept in :mod:`taskflow.core.access.access_fields`) maps every ``Type.field`` of
the committed ``graphql/schema.graphql`` to one of them, but for the refusals' and
connections' fields, which are ``parent`` by type (:func:`rule_of`). A test walks the
schema and fails when a field has no entry here or a rule has no test row, so a new
field cannot slip past the model.
The rules themselves are the functions of :mod:`taskflow.core.access.access`.
"""

from __future__ import annotations

from typing import Final

from taskflow.core.access.access_fields import FIELDS as FIELDS

#: Rule id -> what it allows, and which ``core.access`` function decides it.
RULES: Final[dict[str, str]] = {
    "parent": "A value of an object the caller was already allowed to fetch (checked there).",
    "self": "Any authenticated caller, about themselves (me).",
    "admin": "Admins only: principals are managed by the admin role (may_manage_principals).",
    "candidate": "The slot's candidate rule (core.runs.slots): inbox, claim, release, assign, "
    "complete; the slot must be visible (may_see_slot).",
    "candidates.add": "addCandidate: the slot's delegates, leads and managers whose grants "
    "reach the slot, and admins (may_add_candidate); a slot the caller cannot see is "
    "NOT_FOUND, one they see but may not widen FORBIDDEN.",
    "work": "Leads, managers and applications where their grants reach; a team member in "
    "their own team's queue (work_scope).",
    "board": "Runs of the workflow where the reader's grants reach, else those with a live "
    "slot the caller holds, could take or delegates (reader, covers_whole_workflow).",
    "run.read": "The run as if fetched by id: a grant reaching it, involvement in one of its "
    "slots, or a move meant for the caller (may_read_run); else null / NOT_FOUND.",
    "node": "By the fetched type's own rule (run.read for runs and slots, admin or self for "
    "principals, links.read for links, outbox for notifications).",
    "links.read": "A slot's links and link lines of the timeline: who may manage them, and "
    "people involved in the slot once it is open, never candidates of a pending slot "
    "(may_read_links).",
    "links.manage": "Holder, delegates, leads and managers whose grants reach the slot, and "
    "the application that started the run (may_manage_links, acts_on_run); another "
    "integration granted the workflow gets FORBIDDEN (integrations act only on the runs they "
    "started).",
    "link.token": "Whoever holds the link's token (no account): exactly one slot, once.",
    "application": "Applications granted the workflow (may_start); updateSubject only on "
    "the runs they started (acts_on_run).",
    "subject.delete": "deleteSubject: applications granted a workflow tracking the subject's "
    "type (may_start) and admins, and only when they may cancel each of its live runs "
    "(may_cancel: an integration acts on the runs it started); FORBIDDEN otherwise.",
    "event.raise": "Applications granted the workflow and event, on the runs they started "
    "(may_raise_as_application), else a candidate of the waiting slot on a run they may read.",
    "move": "A run the caller may read, and the move's own `by` rule (may_move).",
    "undo": "A run the caller may read, and the undoable change's own rule: its `by`, its "
    "`same_actor` and its window (core.history.undo).",
    "cancel": "Leads and managers whose grants reach the run, and the application that "
    "started it (may_cancel).",
    "report": "Leads and managers, over the workflows and teams granted (report_scope).",
    "outbox": "One's own notifications; applications read the outbox of their workflows "
    "(may_read_notification).",
    "outbox.link": "Applications granted the notification's workflow (may_start).",
    "outbox.send": "Applications take (lease) deliverable notifications of the workflows "
    "granted and mark those they hold (require_integration, may_start); others get "
    "FORBIDDEN or NOT_FOUND.",
    "timers": "Timers of a workflow, their errors, and mending dead ones: leads and managers "
    "granted the workflow, and admins (may_keep_timers); others get FORBIDDEN, null or "
    "NOT_FOUND.",
    "signout": "Anyone signs themselves out everywhere; admins sign out anyone.",
    "operate": "The needs-attention list and the operator verbs (goto, pauseClocks, "
    "resumeClocks, reassignHeld, rescheduleTimer, retryStep, detachChild, "
    "resolveCompensation, bulkOperate): leads and managers "
    "over the workflows granted, and admins (may_operate, attention_scope); others get "
    "FORBIDDEN or NOT_FOUND. bulkOperate touches only runs of those workflows (the rest "
    "are counted as skipped); its CANCEL and timer verbs keep cancelRun's and the "
    "timers' own rules per run.",
    "definitions": "Any authenticated caller: workflow definitions hold no subject data "
    "(the workflows query).",
    "calendars": "Any authenticated caller: business calendars and their versions hold "
    "working hours and holidays, no subject data (the calendars query).",
    "webhooks": "Webhook endpoints, their secrets, delivery logs and replays: admins (every "
    "endpoint), and a lead for the endpoints they own (created) while granted each of their "
    "workflows whole (may_manage_webhook; an admin's endpoint is never a lead's); others get "
    "FORBIDDEN, null or NOT_FOUND. Deliveries go only while the owner may still receive "
    "them (webhook_owner_refusal).",
    "automations": "Automations of a workflow (list, create, validate, publish, pause, "
    "resume, simulate, delete): admins, and leads granted the workflow whole "
    "(may_manage_automations); others get FORBIDDEN on the list and on verbs naming a "
    "workflow, NOT_FOUND on verbs naming an automation.",
    "workspaces": "Workspaces (list, create, suspend, resume, set limits, export): admins of "
    "the default workspace only (require_workspace_admin); anyone else, another workspace's "
    "admins included, gets FORBIDDEN, for an id that exists as for one that does not.",
    "runs": "The runs list: runs where the reader's grants reach, or (team grants) with a "
    "slot of their teams, and runs with a slot the caller holds, did, could take or "
    "delegates (may_read_run as SQL asks it); others see none.",
}


#: Types whose every field is a value of an object the caller was already allowed to fetch
#: (rule ``parent``) without being listed one by one: the typed refusals (they implement
#: ``Refusal``) and the plumbing of connections (``...Connection``, ``...Edge``,
#: ``PageInfo``). A field of any other type must be in ``FIELDS``.
PARENT_INTERFACES: Final = frozenset({"Refusal"})
PARENT_SUFFIXES: Final = ("Connection", "Edge")
PARENT_TYPES: Final = frozenset({"PageInfo"})


def rule_of(type_name: str, field: str, interfaces: frozenset[str] = frozenset()) -> str | None:
    """The rule guarding ``type_name.field`` (a type implementing ``interfaces``); None when
    the table has none, which the schema-walking test reports."""
    listed = FIELDS.get(f"{type_name}.{field}")
    if listed is not None:
        return listed
    if (
        type_name in PARENT_TYPES
        or type_name.endswith(PARENT_SUFFIXES)
        or interfaces & PARENT_INTERFACES
    ):
        return "parent"
    return None
