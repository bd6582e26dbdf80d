"""Every operation in graphql/operations/ with working variables, for tests that run them all.

:func:`prepare` starts an expense and a vendor run and mints a magic link through the
API; :func:`variables` then gives each operation variables that reach real objects.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from tests.api import magic as m
from tests.api import workflows as w

OPERATIONS = Path(__file__).resolve().parents[2] / "graphql" / "operations"

#: Who runs each operation (a staff member allowed to, where one is).
RUNNER = {
    "start_run": "app",
    "update_subject": "app",
    "upsert_subject": "app",
    "delete_subject": "app",
    "raise_event": "app",
    "mint_magic_link": "olga",
    "revoke_magic_link": "olga",
    "slot_links": "olga",
    "mint_notification_link": "app",
    "outbox_page": "app",
    "take_notifications": "app",
    "mark_notification_sent": "app",
    "mark_notification_failed": "app",
    "board": "leah",
    "board_changed": "leah",
    "work_changed": "leah",
    "work_queue": "leah",
    "cancel_run": "leah",
    "add_candidate": "leah",
    "move": "sam",
    "undo": "sam",
    "sla_report": "leah",
    "state_counts": "leah",
    "insights": "leah",
    "runs_state_at": "leah",
    "upsert_principal": "ada",
    "deactivate_principal": "ada",
    "principals_page": "ada",
    "dead_timers": "ada",
    "retry_timer": "ada",
    "retry_step": "ada",
    "detach_child": "ada",
    "resolve_compensation": "ada",
    "run_children": "ada",
    "discard_timer": "ada",
    # Signs its runner out: someone no other operation runs as.
    "sign_out_everywhere": "sid",
    "goto": "ada",
    "pause_clocks": "ada",
    "resume_clocks": "ada",
    "reassign_held": "ada",
    "reschedule_timer": "ada",
    "bulk_operate": "ada",
    "needs_attention": "ada",
    "runs_page": "leah",
    "set_working_hours": "ada",
    "set_team_calendar": "ada",
    "team_calendars": "ada",
    "add_leave": "ada",
    "remove_leave": "ada",
    "automations": "leah",
    "create_automation": "leah",
    "validate_automation": "leah",
    "publish_automation": "leah",
    "pause_automation": "leah",
    "resume_automation": "leah",
    "simulate_automation": "leah",
    "delete_automation": "leah",
    # The default workspace's admin (B's admin is refused: test_workspace_walk).
    "workspaces": "ada",
    "create_workspace": "ada",
    "suspend_workspace": "ada",
    "resume_workspace": "ada",
    "set_workspace_limits": "ada",
    "export_workspace": "ada",
}

#: An automation of expense-approval (docs/automations.md), for the automation operations.
AUTOMATION = {
    "name": "note big expenses",
    "trigger": {"on": "run.state_entered"},
    "conditions": [{"op": ">", "args": [{"ref": "subject.amount"}, {"lit": 1000}]}],
    "actions": [{"do": "comment", "text": "A big one."}],
}
#: The global id of an automation that does not exist (Automation:<a uuid>).
_NO_AUTOMATION = "QXV0b21hdGlvbjowMDAwMDAwMC0wMDAwLTQwMDAtODAwMC0wMDAwMDAwMDAwMDA"


#: The default workspace, and an id no workspace has (the status verbs then answer NotFound:
#: suspending a real one would refuse its people's tokens for the operations after).
DEFAULT_WORKSPACE = "00000000-0000-4000-8000-000000000001"
_NO_WORKSPACE = "00000000-0000-4000-8000-00000000dead"


#: A lease id no take answered (the mark operations then answer LeaseLost or NotFound).
_LEASE = "00000000-0000-4000-8000-000000000000"


def names() -> list[str]:
    return sorted(p.stem for p in OPERATIONS.glob("*.graphql"))


def text(name: str) -> str:
    return (OPERATIONS / f"{name}.graphql").read_text()


@dataclass
class Objects:
    run_id: str
    slot_id: str
    vendor_slot_id: str
    link_id: str
    link_token: str
    principal_id: str


async def prepare(client: httpx.AsyncClient, people: dict[str, str]) -> Objects:
    started = await w.start(
        client, people["app"], "expense-approval", "expense", "EXP-7", w.EXPENSE
    )
    slot = await w.slot_named(client, people["fiona"], "finance_review")
    link, upload, _ = await m.vendor_link(client, people)
    return Objects(
        run_id=started["run"]["id"],
        slot_id=slot["id"],
        vendor_slot_id=upload,
        link_id=link["link"]["id"],
        link_token=link["token"],
        principal_id="UHJpbmNpcGFsOmNoYXJsaWU",  # charlie
    )


def variables(name: str, o: Objects) -> dict[str, Any]:
    """Variables for operation ``name`` that reach the objects of ``o``."""
    table: dict[str, dict[str, Any]] = {
        "assign": {"slotId": o.slot_id, "to": "fiona", "reason": "cover"},
        "add_candidate": {"slotId": o.slot_id, "role": "finance-lead", "reason": "busy week"},
        "board": {"workflow": "expense-approval", "first": 10},
        "cancel_run": {"runId": o.run_id, "reason": "duplicate"},
        "claim": {"slotId": o.slot_id, "expectedVersion": None},
        "claim_next": {"filter": {"workflow": "expense-approval"}},
        "complete": {"slotId": o.slot_id, "payload": {"decision": "approve"}},
        "complete_with_link": {
            "input": {"token": o.link_token, "payload": {"document": "https://x.example/b"}}
        },
        "deactivate_principal": {"id": o.principal_id},
        "dead_timers": {"first": 10},
        "discard_timer": {"timerId": "VGltZXI6MQ", "reason": "obsolete"},
        "retry_timer": {"timerId": "VGltZXI6MQ"},
        "retry_step": {"stepId": "U3RlcDox"},
        "detach_child": {"runId": o.run_id, "reason": "keep it going"},
        "resolve_compensation": {
            "runId": o.run_id,
            "step": "laptop",
            "action": "CLEAR",
            "reason": "returned by hand",
        },
        "run_children": {"id": o.run_id},
        "run_steps": {"id": o.run_id},
        "sign_out_everywhere": {"principalId": None},
        "set_working_hours": {
            "principalId": o.principal_id,
            "timeZone": "Europe/London",
            "windows": {"mon": [["09:00", "17:00"]]},
            "calendar": None,
        },
        "set_team_calendar": {"team": "role:finance", "calendar": "uk-london"},
        "team_calendars": {},
        "add_leave": {
            "principalId": o.principal_id,
            "from": "2026-12-24T00:00:00+00:00",
            "to": "2026-12-28T00:00:00+00:00",
            "note": "holiday",
        },
        "remove_leave": {
            "principalId": o.principal_id,
            "from": "2026-12-24T00:00:00+00:00",
            "to": "2026-12-28T00:00:00+00:00",
        },
        "goto": {"input": {"runId": o.run_id, "state": "submitted", "reason": "redo"}},
        "undo": {"input": {"runId": o.run_id, "reason": "pressed by mistake"}},
        "pause_clocks": {"input": {"runId": o.run_id, "reason": "customer on holiday"}},
        "resume_clocks": {"input": {"runId": o.run_id, "reason": "back"}},
        "reassign_held": {
            "input": {"principalId": "fiona", "to": None, "reason": "leaving", "dryRun": True}
        },
        "reschedule_timer": {
            "input": {"timerId": "VGltZXI6MQ", "dueAt": "2026-12-02T09:00:00+00:00", "reason": "x"}
        },
        "bulk_operate": {
            "input": {
                "filter": {"workflow": "expense-approval"},
                "verb": "PAUSE_CLOCKS",
                "reason": "audit week",
            }
        },
        "needs_attention": {"first": 10},
        "automations": {"workflow": "expense-approval"},
        "create_automation": {"workflow": "expense-approval", "document": AUTOMATION, "key": None},
        "validate_automation": {"workflow": "expense-approval", "document": AUTOMATION},
        "simulate_automation": {"workflow": "expense-approval", "document": AUTOMATION, "days": 7},
        "publish_automation": {"automationId": _NO_AUTOMATION},
        "pause_automation": {"automationId": _NO_AUTOMATION},
        "resume_automation": {"automationId": _NO_AUTOMATION},
        "delete_automation": {"automationId": _NO_AUTOMATION},
        "workspaces": {"first": 10},
        "create_workspace": {"name": "acme", "limits": {"runs": 10}, "key": None},
        "suspend_workspace": {"workspaceId": _NO_WORKSPACE},
        "resume_workspace": {"workspaceId": _NO_WORKSPACE},
        "set_workspace_limits": {"workspaceId": _NO_WORKSPACE, "limits": {"runs": 5}},
        "export_workspace": {"workspaceId": DEFAULT_WORKSPACE},
        "runs_page": {"filter": {"workflow": "expense-approval"}, "first": 10},
        "workflows": {"name": "expense-approval"},
        "calendars": {"name": "uk-london"},
        "inbox_page": {"first": 10},
        # Subscriptions (over HTTP they are refused; the socket tests run them: test_live*).
        "inbox_changed": {"after": None},
        "work_changed": {"filter": {"audience": ["role:finance"]}},
        "board_changed": {"workflow": "expense-approval", "lane": "submitted"},
        "slot_changed": {"id": o.slot_id},
        "run_changed": {"id": o.run_id},
        "me": {},
        "mint_magic_link": {
            "input": {
                "slotId": o.vendor_slot_id,
                "recipient": {"name": "Anna", "email": "anna@acme.example"},
            }
        },
        "mint_notification_link": {"input": {"notificationId": "Tm90aWZpY2F0aW9uOjE"}},
        "take_notifications": {"input": {"limit": 10, "leaseSeconds": 60}},
        "mark_notification_sent": {
            "input": {"notificationId": "Tm90aWZpY2F0aW9uOjE", "lease": _LEASE}
        },
        "mark_notification_failed": {
            "input": {"notificationId": "Tm90aWZpY2F0aW9uOjE", "lease": _LEASE, "error": "451"}
        },
        "move": {"runId": o.run_id, "move": "withdraw", "input": None},
        "notifications": {"first": 10},
        "outbox_page": {"first": 10},
        "principals_page": {"first": 10},
        "raise_event": {
            "event": "reviewed",
            "payload": {"decision": "approve"},
            "correlationKey": "EXP-7",
            "key": "k-1",
        },
        "release": {"slotId": o.slot_id, "reason": "later"},
        "revoke_magic_link": {"input": {"linkId": o.link_id}},
        "run_lead_time": {"id": o.run_id},
        "run_history": {"id": o.run_id, "at": "2026-12-01T09:00:00+00:00"},
        "state_counts": {"workflow": "expense-approval", "at": "2026-12-01T09:00:00+00:00"},
        "insights": {"window": "WEEK", "workflow": "expense-approval"},
        "runs_state_at": {
            "workflow": "expense-approval",
            "state": "submitted",
            "at": "2026-12-01T09:00:00+00:00",
        },
        "run_timeline": {"id": o.run_id, "first": 10},
        "sla_report": {"from": "2026-11-01T00:00:00+00:00", "to": "2026-12-31T00:00:00+00:00"},
        "slot": {"id": o.slot_id},
        "sla_dry_run": {
            "workflow": "expense-approval",
            "subject": w.EXPENSE,
            "events": [
                {"at": "2026-12-01T09:00:00+00:00", "kind": "start"},
                {"at": "2026-12-03T17:00:00+00:00", "kind": "end"},
            ],
        },
        "slot_clocks": {"id": o.slot_id},
        "slot_links": {"id": o.vendor_slot_id},
        "start_run": {
            "input": {
                "workflow": "expense-approval",
                "subject": {"type": "expense", "externalId": "EXP-8", "attributes": w.EXPENSE},
                "idempotencyKey": "exp-8",
            }
        },
        "update_subject": {"type": "expense", "externalId": "EXP-7", "attributes": w.EXPENSE},
        "upsert_subject": {"type": "expense", "externalId": "EXP-7", "attributes": w.EXPENSE},
        # A subject nobody tracks: the other operations keep their runs.
        "delete_subject": {"type": "expense", "externalId": "EXP-GONE"},
        "upsert_principal": {
            "input": {
                "login": "zoe",
                "displayName": "Zoe",
                "roles": ["finance"],
                "groups": [],
                "timeZone": "UTC",
                "active": True,
            }
        },
        "work_queue": {"audience": ["role:finance"], "first": 10},
    }
    return table[name]
