"""The plain path of an action's success (``automatic.succeeded_plainly``, which the worker
takes without the engine's working copy) decides exactly as the engine does
(``automatic.succeeded``): for every automatic state of the examples, the bench and the
test workflows, with results that take each of their routes, where the plain path applies
its outcome, and so the rows the unit of work writes for it, are the engine's."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from taskflow import errors
from taskflow.config import config
from taskflow.core.clocks import calendars
from taskflow.core.common import unit_of_work as uow
from taskflow.core.definition.workflow import Definition
from taskflow.core.runs.model import RunView
from taskflow.core.steps import automatic
from taskflow.service.versions import definitions

NOW = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)
ROOT = config.PROJECT_ROOT
SOURCES = [
    ROOT / "examples",
    ROOT / "bench" / "step_workflow.py",
    ROOT / "tests" / "integration" / "step_workflows.py",
]
#: Results and subjects that take the routes of those states (amounts, statuses, flags).
RESULTS: list[Any] = [
    {"ok": True},
    {"amount": 500},
    {"amount": 5},
    {"payment_id": "PAY-1", "status": "held"},
    {"payment_id": "PAY-1", "status": "accepted"},
    {},
    None,
]
SUBJECTS: list[dict[str, Any]] = [{}, {"amount": 500, "country": "DE"}]
DETAILS = {"step": "r:3:step", "step_kind": "action", "action": "a:b", "attempt": 1}


def _automatic() -> list[tuple[Definition, str]]:
    catalog = definitions.load([str(p) for p in SOURCES])
    return [(d, s.name) for d in catalog for s in d.states if s.automatic and s.success_routes]


def _run(definition: Definition, state: str, subject: dict[str, Any]) -> RunView:
    return RunView(
        id="00000000-0000-0000-0000-000000000001",
        workflow=definition.name,
        definition_version=definition.version,
        state=state,
        status="active",
        visit=3,
        subject=subject,
        state_entered_at=NOW - timedelta(hours=1),
        results={"earlier": {"x": 1}},
    )


def test_the_plain_path_decides_and_plans_as_the_engine_for_every_automatic_state() -> None:
    applied: set[tuple[str, str]] = set()
    registry = calendars.Registry({})
    for (definition, state), result, subject in itertools.product(_automatic(), RESULTS, SUBJECTS):
        run = _run(definition, state, subject)
        plain = automatic.succeeded_plainly(
            definition, run, touched=False, result=result, details=DETAILS, now=NOW
        )
        try:
            general = automatic.succeeded(
                definition, run, (), result=result, details=DETAILS, now=NOW, new_id=lambda: "x"
            )
        except errors.TaskflowError:
            assert plain is None  # the engine refused (a hook): the plain path never applies
            continue
        if plain is None:
            continue
        applied.add((definition.name, state))
        assert plain == general, (definition.name, state, result)
        ctx = uow.context(definition, registry)
        assert uow.plan(plain, ctx, [], NOW) == uow.plan(general, ctx, [], NOW)
        # A run with slots or timer rows is never decided plainly.
        touched = automatic.succeeded_plainly(
            definition, run, touched=True, result=result, details=DETAILS, now=NOW
        )
        assert touched is None
    assert ("bench-steps", "work") in applied
    assert len(applied) >= 3, applied


@pytest.mark.parametrize("status", ["completed", "cancelled"])
def test_an_ended_run_is_never_decided_plainly(status: str) -> None:
    definition, state = next(p for p in _automatic() if p[0].name == "bench-steps")
    run = _run(definition, state, {})
    ended = RunView(**{**run.__dict__, "status": status})
    assert (
        automatic.succeeded_plainly(
            definition, ended, touched=False, result={"ok": True}, details=DETAILS, now=NOW
        )
        is None
    )
