"""Every mutation's use case runs through the one retry helper (``service/common/retry.py``).

The map below names the use case behind each mutation; it must cover every mutation the
schema serves, so a new one cannot slip past the retry (and its ``Busy`` answer).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from taskflow.api.graphql import schema
from taskflow.service.access import principals, working_hours
from taskflow.service.automations import automations
from taskflow.service.clocks import team_calendars, timer_admin
from taskflow.service.common import retry
from taskflow.service.compose import compensations, detach
from taskflow.service.delivery import delivery, webhooks
from taskflow.service.history import undoing
from taskflow.service.links import link_use, links, notification_links
from taskflow.service.operate import bulk, operate
from taskflow.service.runs import events, owned, runs, subjects
from taskflow.service.slots import candidates, slots
from taskflow.service.steps import step_admin
from taskflow.service.versions import run_migrations
from taskflow.service.workspaces import workspaces

USE_CASES: dict[str, Callable[..., Any]] = {
    "upsertPrincipal": principals.upsert,
    "deactivatePrincipal": principals.deactivate,
    "startRun": runs.start_run,
    "updateSubject": runs.update_subject,
    "undo": undoing.undo,
    "upsertSubject": owned.upsert_subject,
    "deleteSubject": subjects.delete_subject,
    "raiseEvent": events.raise_event,
    "claim": slots.claim,
    "claimNext": slots.claim_next,
    "release": slots.release,
    "assign": slots.assign,
    "addCandidate": candidates.add_candidate,
    "complete": slots.complete,
    "move": runs.move,
    "cancelRun": runs.cancel_run,
    "mintMagicLink": links.mint,
    "revokeMagicLink": links.revoke,
    "completeWithLink": link_use.complete,
    "mintNotificationLink": notification_links.mint,
    "takeNotifications": delivery.take,
    "markNotificationSent": delivery.mark_sent,
    "markNotificationFailed": delivery.mark_failed,
    "signOutEverywhere": principals.sign_out_everywhere,
    "setWorkingHours": working_hours.set_working_hours,
    "addLeave": working_hours.add_leave,
    "removeLeave": working_hours.remove_leave,
    "setTeamCalendar": team_calendars.set_team_calendar,
    "retryTimer": timer_admin.retry,
    "discardTimer": timer_admin.discard,
    "goto": operate.goto,
    "pauseClocks": operate.pause_clocks,
    "resumeClocks": operate.resume_clocks,
    "reassignHeld": operate.reassign_held,
    "rescheduleTimer": operate.reschedule_timer,
    "bulkOperate": bulk.bulk_operate,
    "migrateRuns": run_migrations.apply_as,
    "createWebhookEndpoint": webhooks.create,
    "updateWebhookEndpoint": webhooks.update,
    "rotateWebhookSecret": webhooks.rotate,
    "deleteWebhookEndpoint": webhooks.delete,
    "replayWebhookDeliveries": webhooks.replay,
    "retryStep": step_admin.retry_step,
    "detachChild": detach.detach_child,
    "resolveCompensation": compensations.resolve_compensation,
    "createAutomation": automations.create,
    "validateAutomation": automations.validate,
    "publishAutomation": automations.move,
    "pauseAutomation": automations.move,
    "resumeAutomation": automations.move,
    "simulateAutomation": automations.simulate,
    "deleteAutomation": automations.delete,
    "createWorkspace": workspaces.create,
    "suspendWorkspace": workspaces.set_status,
    "resumeWorkspace": workspaces.set_status,
    "setWorkspaceLimits": workspaces.set_limits,
    "exportWorkspace": workspaces.export,
}


def test_the_map_names_every_mutation() -> None:
    mutation_type = schema.build_schema()._schema.mutation_type
    assert mutation_type is not None
    assert set(mutation_type.fields) == set(USE_CASES)


def _retried(use_case: Callable[..., Any]) -> bool:
    """True when ``use_case`` is :func:`retry.retried`'s wrapper."""
    return use_case.__code__.co_filename == retry.__file__


def test_every_mutation_use_case_is_retried() -> None:
    assert [name for name, use_case in USE_CASES.items() if not _retried(use_case)] == []
