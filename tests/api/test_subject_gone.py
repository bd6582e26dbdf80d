"""deleteSubject: live runs end (cancelled with reason subject-gone, or moved to the state the
definition declares), their slots, timers and links with them; the engine refuses any later
action; nothing is orphaned, also when subjects are deleted mid-run under concurrent load."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import httpx
import pytest

from taskflow.api.graphql.common import relay
from taskflow.service.clocks import timers
from taskflow.service.common import container
from tests.api import magic as m
from tests.api import workflows as w
from tests.api.reminders import at
from tests.conftest import app_with, gql

pytestmark = pytest.mark.anyio

gone_services, api, tokens = app_with(
    "gone_services", Path(__file__).parent / "expiry_workflows.py"
)

CLIENT = "client@quotes.example"
DELETE = """mutation($type: String!, $externalId: String!) {
  deleteSubject(input: {type: $type, externalId: $externalId}) { __typename
  ... on DeleteSubjectSuccess { subject { externalId } runs { id state status } linksRevoked }
  ... on Refusal { code message } } }"""
UPDATE = """mutation($input: UpdateSubjectInput!) { updateSubject(input: $input) { __typename
  ... on Refusal { code message } } }"""
UPSERT = """mutation($input: UpsertSubjectInput!) { upsertSubject(input: $input) { __typename
  ... on Refusal { code message } } }"""
SLOTS = """query($id: ID!) { run(id: $id) { state status slots { id status } } }"""

#: What outlives a gone subject, counted from the database: armed timers, live slots and
#: links still usable, of the runs of subjects marked gone.
ORPHANS = """
SELECT (SELECT count(*) FROM timer t JOIN run r ON r.id = t.run JOIN subject s ON s.id = r.subject
        WHERE s.gone_at IS NOT NULL AND t.status = 'armed') AS timers,
       (SELECT count(*) FROM slot sl JOIN run r ON r.id = sl.run JOIN subject s ON s.id = r.subject
        WHERE s.gone_at IS NOT NULL AND sl.status IN ('pending', 'open', 'claimed')) AS slots,
       (SELECT count(*) FROM magic_link l JOIN run r ON r.id = l.run
          JOIN subject s ON s.id = r.subject
        WHERE s.gone_at IS NOT NULL AND l.revoked_at IS NULL AND l.consumed_at IS NULL) AS links,
       (SELECT count(*) FROM run r JOIN subject s ON s.id = r.subject
        WHERE s.gone_at IS NOT NULL AND r.status IN ('active', 'scheduled')) AS runs
"""


async def delete(api: httpx.AsyncClient, token: str, kind: str, ref: str) -> dict[str, Any]:
    variables = {"type": kind, "externalId": ref}
    return dict((await gql(api, DELETE, variables, token=token)).ok()["deleteSubject"])


async def start_quote(api: httpx.AsyncClient, tokens: dict[str, str], ref: str) -> str:
    attributes = {"reference": ref, "client_email": CLIENT}
    started = await w.start(api, tokens["app"], "quote", "quote", ref, attributes)
    assert started["__typename"] == "StartRunSuccess", started
    return str(started["run"]["id"])


async def orphans(services: container.Services) -> dict[str, int]:
    async with services.db.connection() as conn:
        row = await conn.fetchrow(ORPHANS)
    return dict(row)


async def test_a_deleted_subjects_run_is_cancelled_and_refuses_everything_after(
    api: httpx.AsyncClient, tokens: dict[str, str], gone_services: container.Services
) -> None:
    run_id = await start_quote(api, tokens, "Q-G1")
    [sign] = (await gql(api, SLOTS, {"id": run_id}, token=tokens["leah"])).ok()["run"]["slots"]
    assert (await w.claim(api, tokens["fiona"], sign["id"]))["__typename"] == "SlotSuccess"
    link = await m.mint(api, tokens["fiona"], sign["id"], email=CLIENT, name=None)
    assert link["__typename"] == "MintMagicLinkSuccess"

    deleted = await delete(api, tokens["app"], "quote", "Q-G1")
    assert deleted["runs"] == [{"id": run_id, "state": "signing", "status": "CANCELLED"}]
    assert deleted["linksRevoked"] == 1
    assert await orphans(gone_services) == {"timers": 0, "slots": 0, "links": 0, "runs": 0}
    lines = await w.timeline(api, tokens["leah"], run_id, ["subject.gone", "run.cancelled"])
    assert [(x["kind"], x["reason"]) for x in lines] == [
        ("subject.gone", "subject-gone"),
        ("run.cancelled", "subject-gone"),
    ]

    # The engine refuses what comes later, with its own code.
    late = await w.complete(api, tokens["fiona"], sign["id"], {})
    assert late["__typename"] in ("SubjectGone", "SlotNotOpen"), late
    cancel = await gql(
        api,
        """mutation($input: CancelRunInput!) { cancelRun(input: $input) { __typename
           ... on Refusal { code } } }""",
        {"input": {"runId": run_id, "reason": "again"}},
        token=tokens["app"],
    )
    assert cancel.ok()["cancelRun"] == {"__typename": "SubjectGone", "code": "SUBJECT_GONE"}
    update = {"input": {"type": "quote", "externalId": "Q-G1", "attributes": {"x": 1}}}
    refused = (await gql(api, UPDATE, update, token=tokens["app"])).ok()["updateSubject"]
    assert refused["code"] == "SUBJECT_GONE"
    again = await w.start(api, tokens["app"], "quote", "quote", "Q-G1", {"reference": "Q-G1"})
    assert again["code"] == "SUBJECT_GONE", again
    upsert = await gql(
        api,
        UPSERT,
        {"input": {"type": "quote", "externalId": "Q-G1", "attributes": {"x": 2}}},
        token=tokens["app"],
    )
    assert upsert.ok()["upsertSubject"]["code"] == "SUBJECT_GONE"
    used = await gql(api, m.COMPLETE_WITH_LINK, {"input": {"token": link["token"], "payload": {}}})
    assert used.ok()["completeWithLink"]["code"] == "LINK_UNUSABLE"
    # Deleting it again changes nothing.
    assert (await delete(api, tokens["app"], "quote", "Q-G1"))["runs"] == []
    assert await timers.run_due(gone_services, at(20, 9)) == 0


async def test_a_definition_sends_the_runs_of_a_deleted_subject_to_its_declared_state(
    api: httpx.AsyncClient, tokens: dict[str, str]
) -> None:
    started = await w.start(
        api, tokens["app"], "offer", "offer", "O-G1", {"offer_valid_until": "2026-12-31"}
    )
    deleted = await delete(api, tokens["app"], "offer", "O-G1")
    assert deleted["runs"] == [
        {"id": started["run"]["id"], "state": "withdrawn", "status": "COMPLETED"}
    ]


async def test_subjects_deleted_mid_run_under_load_leave_nothing_behind(
    api: httpx.AsyncClient, tokens: dict[str, str], gone_services: container.Services
) -> None:
    """Sixteen quotes; while people claim and complete them and the worker fires their
    warnings and expiries (several connections at once), half the subjects are deleted.
    Then, from the database: no armed timer, live slot, usable link or live run of a deleted
    subject, and each deleted subject's run ended once."""
    refs = [f"Q-L{i}" for i in range(16)]
    runs = {ref: await start_quote(api, tokens, ref) for ref in refs}
    slots = {}
    for ref, run_id in runs.items():
        found = (await gql(api, SLOTS, {"id": run_id}, token=tokens["leah"])).ok()["run"]
        slots[ref] = found["slots"][0]["id"]
    for ref in refs[::3]:
        assert (await w.claim(api, tokens["fiona"], slots[ref]))["__typename"] == "SlotSuccess"
        await m.mint(api, tokens["fiona"], slots[ref], email=CLIENT, name=None)
    gone = refs[::2]
    gone_services.clock.set(at(4, 9))  # type: ignore[attr-defined]

    async def work(ref: str) -> object:
        if ref in gone:
            return await delete(api, tokens["app"], "quote", ref)
        return await w.complete(api, tokens["fiona"], slots[ref], {})

    answers = await asyncio.gather(
        *(work(ref) for ref in refs),
        timers.run_due(gone_services, at(4, 9)),
        timers.run_due(gone_services, at(4, 9)),
    )
    assert all(
        a["__typename"] in ("DeleteSubjectSuccess", "CompleteSuccess", "SlotNotOpen")
        for a in answers[: len(refs)]
        if isinstance(a, dict)
    ), answers
    assert await orphans(gone_services) == {"timers": 0, "slots": 0, "links": 0, "runs": 0}
    async with gone_services.db.connection() as conn:
        for ref in gone:
            ends = await conn.fetchval(
                "SELECT count(*) FROM audit_event WHERE run = $1 "
                "AND kind IN ('run.cancelled', 'run.completed')",
                relay.from_global_id(runs[ref])[1],
            )
            assert ends == 1, ref


async def test_a_delayed_start_of_a_deleted_subject_never_starts(
    api: httpx.AsyncClient, tokens: dict[str, str], gone_services: container.Services
) -> None:
    later = at(1, 11).isoformat()  # two hours after the clock's now
    variables = {
        "input": {
            "workflow": "quote",
            "subject": {
                "type": "quote",
                "externalId": "Q-S1",
                "attributes": {"reference": "Q-S1", "client_email": CLIENT},
            },
            "startAt": {"instant": later},
        }
    }
    started = (await gql(api, w.START, variables, token=tokens["app"])).ok()["startRun"]
    assert started["run"]["status"] == "SCHEDULED", started
    deleted = await delete(api, tokens["app"], "quote", "Q-S1")
    assert [r["status"] for r in deleted["runs"]] == ["CANCELLED"]
    assert await orphans(gone_services) == {"timers": 0, "slots": 0, "links": 0, "runs": 0}
    assert await timers.run_due(gone_services, at(1, 12)) == 0
