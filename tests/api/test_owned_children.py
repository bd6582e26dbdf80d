"""A child run of a workflow that owns its subject type, over HTTP: the child is the
subject's owned run; a subject already owned by a live run, or attributes writing the
owned field, refuse the child (docs/composition.md, "How a child runs")."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from taskflow.service.common import container
from tests.api import test_children as ch
from tests.conftest import app_with, gql

pytestmark = pytest.mark.anyio

HERE = Path(__file__).parent
owning_children, api, tokens = app_with("owning_children", HERE / "owned_child_workflows.py")

UPSERT = """mutation($input: UpsertSubjectInput!) { upsertSubject(input: $input) { __typename
  ... on UpsertSubjectSuccess { subject { attributes } runs { id } started { id } }
  ... on Refusal { code message } } }"""
CHILD = """query($id: ID!) { run(id: $id) { subject { type externalId attributes }
  timeline(first: 5) { edges { node { kind actor } } } } }"""


async def upsert(api: httpx.AsyncClient, token: str, external_id: str) -> dict[str, Any]:
    variables = {"input": {"type": "case", "externalId": external_id, "attributes": {"n": 1}}}
    found: dict[str, Any] = (await gql(api, UPSERT, variables, token=token)).ok()["upsertSubject"]
    return found


async def opened(
    api: httpx.AsyncClient, tokens: dict[str, str], services: container.Services, workflow: str
) -> dict[str, Any]:
    started = await ch.w.start(api, tokens["app"], workflow, "doc", "D-1", {"title": "D-1"})
    assert started["__typename"] == "StartRunSuccess", started
    await ch.settle(services)
    return await ch.run(api, tokens["ada"], str(started["run"]["id"]))


async def test_a_child_of_an_owning_workflow_is_its_new_subjects_owned_run(
    api: httpx.AsyncClient, tokens: dict[str, str], owning_children: container.Services
) -> None:
    parent = await opened(api, tokens, owning_children, "case-opener")
    [case] = parent["children"]
    assert (case["status"], case["run"]["state"]) == ("LIVE", "open")
    child_id = case["run"]["id"]
    child = (await gql(api, CHILD, {"id": child_id}, token=tokens["ada"])).ok()["run"]
    assert child["subject"]["attributes"]["status"] == "open"  # the owned field: its state
    started = [e["node"] for e in child["timeline"]["edges"] if e["node"]["kind"] == "run.started"]
    assert started == [{"kind": "run.started", "actor": None}]  # taskflow started it
    again = await upsert(api, tokens["app"], "D-1")
    assert again["started"] is None  # the child is the case's owned run: no second one
    assert [r["id"] for r in again["runs"]] == [child_id]


async def test_a_subject_whose_owned_run_is_live_refuses_the_child(
    api: httpx.AsyncClient, tokens: dict[str, str], owning_children: container.Services
) -> None:
    owned = (await upsert(api, tokens["app"], "D-1"))["started"]
    parent = await opened(api, tokens, owning_children, "case-opener")
    assert parent["state"] == "blocked"
    [refused] = ch.lines(parent, "child.refused")
    assert "already has a live 'owned-case' run" in refused["reason"]
    assert ch.local(owned["id"]) in refused["reason"]


async def test_a_child_writing_the_owned_field_is_refused_and_writes_nothing(
    api: httpx.AsyncClient, tokens: dict[str, str], owning_children: container.Services
) -> None:
    parent = await opened(api, tokens, owning_children, "case-writer")
    assert parent["state"] == "blocked"
    [refused] = ch.lines(parent, "child.refused")
    assert "'status' shows the state of the 'owned-case' run" in refused["reason"]
    [case] = parent["children"]
    assert (case["status"], case["run"]) == ("SETTLED", None)
    # No case was written: its first upsert starts the owner's run.
    assert (await upsert(api, tokens["app"], "D-1"))["started"] is not None
