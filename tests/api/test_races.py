"""Two people acting on one slot at the same moment, for EVERY pair of mutations on a slot.

Each pair runs simultaneously, over HTTP through the real GraphQL app, each request on
its own database connection, many rounds (half on an open slot, half on one already
claimed). Whatever the interleaving, each answer is a success or a typed refusal, never
an error, never INTERNAL, never BUSY (the lock order leaves PostgreSQL nothing to
deadlock on); the pair of answers is one that running them one after the other gives
(in one order or the other: one success and the refusal that explains it, or two
successes where both are legal); a slot is completed at most once; and afterwards the
slot's status and holder are what its own timeline says.

The mutations come from :data:`MUTATIONS`; a test checks that list against the schema's
mutations on a slot, so a new one cannot slip past.
"""

from __future__ import annotations

import asyncio
import itertools
import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from taskflow.api.graphql import schema
from taskflow.api.graphql.common import relay
from taskflow.service.access import principals as principal_service
from taskflow.service.common import container
from taskflow.service.runs import runs as run_service
from taskflow.service.slots import slots as slot_service
from tests.api import workflows as w
from tests.conftest import gql
from tests.integration.starting import app_starts

pytestmark = pytest.mark.anyio

#: Rounds per pair (half on an open slot, half on a claimed one); bounded for CI.
ROUNDS = int(os.environ.get("TASKFLOW_RACE_ROUNDS", "6"))

SLOT = "first_response"
SUCCESSES = {"SlotSuccess", "CompleteSuccess", "RaiseEventSuccess", "RunSuccess",
             "UpdateSubjectSuccess", "DeleteSubjectSuccess"}  # fmt: skip

#: Every field a refusal may carry (the union members share the Refusal interface).
ANSWER = "__typename ... on Refusal { code message }"


@dataclass(frozen=True)
class Target:
    run_id: str  # global ids
    slot_id: str
    external_id: str


Mutation = Callable[[httpx.AsyncClient, dict[str, str], Target, int], Awaitable[dict[str, Any]]]


async def _call(
    client: httpx.AsyncClient, token: str, field: str, kind: str, variables: dict[str, Any]
) -> dict[str, Any]:
    query = f"mutation($input: {kind}!) {{ {field}(input: $input) {{ {ANSWER} }} }}"
    result = await gql(client, query, {"input": variables}, token=token)
    assert not result.errors, f"{field} answered errors: {result.errors}"
    assert result.status == 200
    assert result.data is not None
    answer: dict[str, Any] = result.data[field]
    return answer


def _other(variant: int, first: str, second: str) -> str:
    return first if variant == 0 else second


async def claim(c: httpx.AsyncClient, p: dict[str, str], t: Target, v: int) -> dict[str, Any]:
    return await _call(c, p[_other(v, "sasha", "sven")], "claim", "ClaimInput",
                       {"slotId": t.slot_id})  # fmt: skip


async def release(c: httpx.AsyncClient, p: dict[str, str], t: Target, v: int) -> dict[str, Any]:
    return await _call(c, p[_other(v, "sven", "tara")], "release", "ReleaseInput",
                       {"slotId": t.slot_id, "reason": "race"})  # fmt: skip


async def assign(c: httpx.AsyncClient, p: dict[str, str], t: Target, v: int) -> dict[str, Any]:
    return await _call(c, p["tara"], "assign", "AssignInput",
                       {"slotId": t.slot_id, "to": _other(v, "sasha", "sven")})  # fmt: skip


async def add_candidate(
    c: httpx.AsyncClient, p: dict[str, str], t: Target, v: int
) -> dict[str, Any]:
    who = {"principal": "tess"} if v == 0 else {"role": "support-lead"}
    return await _call(c, p["tara"], "addCandidate", "AddCandidateInput",
                       {"slotId": t.slot_id, "reason": "race", **who})  # fmt: skip


async def complete(c: httpx.AsyncClient, p: dict[str, str], t: Target, v: int) -> dict[str, Any]:
    return await _call(c, p[_other(v, "sven", "sasha")], "complete", "CompleteInput",
                       {"slotId": t.slot_id, "payload": {"message": f"answer {v}"}})  # fmt: skip


async def raise_event(c: httpx.AsyncClient, p: dict[str, str], t: Target, v: int) -> dict[str, Any]:
    target = {"runId": t.run_id, "slotName": SLOT}
    return await _call(c, p["app"], "raiseEvent", "RaiseEventInput",
                       {"event": "responded", "target": target,
                        "payload": {"message": f"by mail {v}"}})  # fmt: skip


async def claim_next(c: httpx.AsyncClient, p: dict[str, str], t: Target, v: int) -> dict[str, Any]:
    return await _call(c, p[_other(v, "sasha", "sven")], "claimNext", "ClaimNextInput",
                       {"filter": {"workflow": "support-ticket", "slot": SLOT}})  # fmt: skip


async def move(c: httpx.AsyncClient, p: dict[str, str], t: Target, v: int) -> dict[str, Any]:
    return await _call(c, p[_other(v, "sasha", "sven")], "move", "MoveInput",
                       {"runId": t.run_id, "move": "ask_customer",
                        "input": {"question": "a screenshot?"}})  # fmt: skip


async def cancel_run(c: httpx.AsyncClient, p: dict[str, str], t: Target, v: int) -> dict[str, Any]:
    return await _call(c, p["ada"], "cancelRun", "CancelRunInput",
                       {"runId": t.run_id, "reason": f"duplicate {v}"})  # fmt: skip


async def update_subject(
    c: httpx.AsyncClient, p: dict[str, str], t: Target, v: int
) -> dict[str, Any]:
    attributes = {**w.TICKET, "reference": t.external_id, "priority": _other(v, "P1", "P3")}
    return await _call(c, p["app"], "updateSubject", "UpdateSubjectInput",
                       {"type": "ticket", "externalId": t.external_id,
                        "attributes": attributes})  # fmt: skip


async def delete_subject(
    c: httpx.AsyncClient, p: dict[str, str], t: Target, v: int
) -> dict[str, Any]:
    return await _call(c, p["app"], "deleteSubject", "DeleteSubjectInput",
                       {"type": "ticket", "externalId": t.external_id})  # fmt: skip


#: Every mutation that acts on a slot or its run, by its GraphQL name.
MUTATIONS: dict[str, Mutation] = {
    "claim": claim,
    "release": release,
    "assign": assign,
    "addCandidate": add_candidate,
    "complete": complete,
    "raiseEvent": raise_event,
    "claimNext": claim_next,
    "move": move,
    "cancelRun": cancel_run,
    "updateSubject": update_subject,
    "deleteSubject": delete_subject,
}
#: Mutations that do not act on a slot of a running run (nothing to race here).
NOT_ON_A_SLOT = {
    "startRun",  # makes a run; two starts of one subject race in test_claim_races' kin
    "upsertSubject",  # a subject, then its owner's run: raced in test_starts (one run)
    "upsertPrincipal",
    "deactivatePrincipal",
    "mintMagicLink",
    "revokeMagicLink",
    "completeWithLink",
    "mintNotificationLink",
    # The outbox's lease: raced in test_notification_delivery (two takers, real connections).
    "takeNotifications",
    "markNotificationSent",
    "markNotificationFailed",
    "signOutEverywhere",  # a principal's tokens, no slot
    "setWorkingHours",  # a principal's hours and leave, no slot (leave races in
    "addLeave",  # test_working_hours)
    "removeLeave",
    # A team's own calendar, then each live slot open to the team: its run locked, then the
    # slot, as a holder change does (deadlines.rechain_one); raced against a claim in
    # tests/integration/test_team_calendar.py.
    "setTeamCalendar",
    "retryTimer",  # a dead timer, not a slot
    "discardTimer",
    "retryStep",  # a parked automatic step, not a slot (its run locked first)
    # A child run's link to its parent (parent, row, child locked in order); a parent's cancel
    # against its child's end is raced in test_child_races.
    "detachChild",
    # A failed saga compensation resolved (run locked, then its row): two operators at once
    # settle to one resolution, raced in test_sagas.
    "resolveCompensation",
    # A run's state rewound (run locked, then its slots); raced against complete and a timer
    # in test_undo.
    "undo",
    # Operator verbs: a run's state, clocks or held slots, or a timer, by an operator. They
    # follow the lock order (service/operate/operate.py) but are not raced here yet.
    "goto",
    "pauseClocks",
    "resumeClocks",
    "reassignHeld",
    "rescheduleTimer",
    "bulkOperate",  # single-run operator verbs over a filter, one run at a time
    "migrateRuns",  # an admin's batch over many runs, each run locked first (run_migrations)
    # Webhook endpoints: no slot; an endpoint row locked FOR UPDATE per change.
    "createWebhookEndpoint",
    "updateWebhookEndpoint",
    "rotateWebhookSecret",
    "deleteWebhookEndpoint",
    "replayWebhookDeliveries",
    # Automations: no slot; an automation row (publish/pause/resume: one UPDATE of its status
    # and version, a lost race is retried); validate and simulate write nothing.
    "createAutomation",
    "validateAutomation",
    "publishAutomation",
    "pauseAutomation",
    "resumeAutomation",
    "simulateAutomation",
    "deleteAutomation",
    # Workspaces: no slot; a workspace row (suspend/resume lock it FOR UPDATE, then compare
    # its status; create relies on the unique name); export writes nothing.
    "createWorkspace",
    "suspendWorkspace",
    "resumeWorkspace",
    "setWorkspaceLimits",
    "exportWorkspace",
}
#: Both of these deposit the slot's event: at most one may succeed.
DEPOSITS = {"complete", "raiseEvent"}

PAIRS = list(itertools.combinations_with_replacement(sorted(MUTATIONS), 2))

_numbers = itertools.count()


async def _prepare(services: container.Services, claimed: bool) -> Target:
    """A ticket past triage, its first response open (or claimed by sven)."""
    tess = await principal_service.get(services, "tess")
    sven = await principal_service.get(services, "sven")
    assert tess is not None
    assert sven is not None
    external_id = f"T-RACE-{next(_numbers)}"
    attributes = {**w.TICKET, "reference": external_id}
    run = await app_starts(
        services, "support-ticket", external_id, attributes, subject_type="ticket"
    )
    run_id = run.id
    async with services.db.connection() as conn:
        triage = await conn.fetchval(
            "SELECT id::text FROM slot WHERE run = $1::uuid AND name = 'triage'", run_id
        )
    await slot_service.claim(services, tess, triage, None)
    await slot_service.complete(
        services, tess, triage, event=None,
        payload={"priority": "P2", "category": "bug"}, expected_version=None,
    )  # fmt: skip
    async with services.db.connection() as conn:
        slot_id = await conn.fetchval(
            "SELECT id::text FROM slot WHERE run = $1::uuid AND name = $2 AND status = 'open'",
            run_id,
            SLOT,
        )
    assert slot_id is not None
    if claimed:
        await slot_service.claim(services, sven, slot_id, None)
    return Target(
        relay.to_global_id("Run", run_id), relay.to_global_id("Slot", slot_id), external_id
    )


async def _finish(services: container.Services, target: Target) -> None:
    """Cancel the run if it is still live, so the next round's claimNext sees only its own."""
    ada = await principal_service.get(services, "ada")
    assert ada is not None
    run_id = relay.from_global_id(target.run_id)[1]
    async with services.db.connection() as conn:
        status = await conn.fetchval("SELECT status FROM run WHERE id = $1::uuid", run_id)
    if status == "active":
        await run_service.cancel_run(services, ada, run_id=run_id, reason="round over")


def _replayed(lines: list[Any]) -> tuple[str, str | None]:
    """The slot's (status, holder) as its own timeline tells it, line by line."""
    status, holder = "open", None
    for line in lines:
        kind, actor, details = line["kind"], line["actor"], line["details"]
        if kind == "slot.claimed":
            status, holder = "claimed", actor
        elif kind == "slot.assigned":
            status, holder = "claimed", details["to"]
        elif kind == "slot.released":
            status, holder = "open", None
        elif kind == "slot.satisfied":
            status = "satisfied"
        elif kind == "slot.cancelled":
            status = "cancelled"
    return status, holder


async def _agrees_with_timeline(services: container.Services, target: Target) -> None:
    slot_id = relay.from_global_id(target.slot_id)[1]
    async with services.db.connection() as conn:
        slot = await conn.fetchrow("SELECT status, holder FROM slot WHERE id = $1::uuid", slot_id)
        lines = await conn.fetch(
            "SELECT kind, actor, details FROM audit_event WHERE slot = $1::uuid "
            "AND kind = ANY($2::text[]) ORDER BY id",
            slot_id,
            ["slot.claimed", "slot.assigned", "slot.released", "slot.satisfied",
             "slot.cancelled"],
        )  # fmt: skip
    assert slot is not None
    status, holder = _replayed(list(lines))
    assert status == slot["status"], (status, dict(slot), [dict(x) for x in lines])
    if status == "claimed":
        assert holder == slot["holder"], (holder, dict(slot))


def test_every_mutation_on_a_slot_is_raced() -> None:
    """The list above covers every mutation the schema serves, or says why not."""
    mutation_type = schema.build_schema()._schema.mutation_type
    assert mutation_type is not None
    names = set(mutation_type.fields)
    assert names == set(MUTATIONS) | NOT_ON_A_SLOT, names ^ (set(MUTATIONS) | NOT_ON_A_SLOT)


async def _serially(
    services: container.Services,
    client: httpx.AsyncClient,
    people: dict[str, str],
    first: str,
    second: str,
    *,
    claimed: bool,
    reverse: bool,
) -> tuple[str, str]:
    """The answers' types when the two run one after the other (in the given order)."""
    target = await _prepare(services, claimed)
    order = [(1, second), (0, first)] if reverse else [(0, first), (1, second)]
    kinds: dict[int, str] = {}
    for variant, name in order:
        kinds[variant] = (await MUTATIONS[name](client, people, target, variant))["__typename"]
    await _agrees_with_timeline(services, target)
    await _finish(services, target)
    return kinds[0], kinds[1]


def _serializable(
    names: tuple[str, str], got: tuple[str, str], serial: set[tuple[str, str]]
) -> bool:
    """``got`` is what one of the serial orders gives; claimNext may also find nothing, since
    it passes over a slot whose run another writer holds at that very moment."""

    def same(name: str, kind: str, wanted: str) -> bool:
        return kind == wanted or (name == "claimNext" and kind == "NothingToClaim")

    return any(all(map(same, names, got, want)) for want in serial)


@pytest.mark.parametrize(("first", "second"), PAIRS, ids=[f"{a}-{b}" for a, b in PAIRS])
async def test_two_mutations_at_once_give_typed_answers(
    services: container.Services,
    client: httpx.AsyncClient,
    people: dict[str, str],
    first: str,
    second: str,
) -> None:
    serial = {
        claimed: {
            await _serially(
                services, client, people, first, second, claimed=claimed, reverse=reverse
            )
            for reverse in (False, True)
        }
        for claimed in (False, True)
    }
    for round_ in range(ROUNDS):
        claimed = round_ % 2 == 1
        target = await _prepare(services, claimed)
        answers = await asyncio.gather(
            MUTATIONS[first](client, people, target, 0),
            MUTATIONS[second](client, people, target, 1),
        )
        for name, answer in zip((first, second), answers, strict=True):
            kind = answer["__typename"]
            assert kind in SUCCESSES or "code" in answer, (name, answer)
            assert answer.get("code") not in ("INTERNAL", "BUSY"), (name, answer)
        got = (answers[0]["__typename"], answers[1]["__typename"])
        # As if one went first and then the other: one success and the refusal that
        # explains it, or two successes where both are legal in either order.
        assert _serializable((first, second), got, serial[claimed]), (got, serial[claimed])
        won = [n for n, a in zip((first, second), answers, strict=True)
               if a["__typename"] in SUCCESSES]  # fmt: skip
        assert len([n for n in won if n in DEPOSITS]) <= 1, answers
        await _agrees_with_timeline(services, target)
        await _finish(services, target)
