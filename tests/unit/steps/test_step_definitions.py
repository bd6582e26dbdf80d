"""Automatic states in the DSL: load-time checks, the JSON document, and the engine's decisions."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from taskflow.core.definition import (
    DefinitionError,
    Exponential,
    Fixed,
    OnError,
    Route,
    Slot,
    State,
    define,
    every,
    real,
    result,
    subject,
    timeout,
    who,
)
from taskflow.core.definition.checks import validate as v
from taskflow.core.runs import engine
from taskflow.core.runs.model import RunView
from taskflow.core.steps import automatic

NOW = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)
ACTION = "tests.unit.steps.test_step_definitions:post"


async def post(ctx: Any) -> dict[str, Any]:
    return {"ok": True}


def flow(**automatic_state: Any) -> Any:
    parts: dict[str, Any] = {
        "action": ACTION,
        "on_success": [Route("big", when=result.pay.amount > 100), Route("done")],
        **automatic_state,
    }
    return define(
        "paying",
        tracks="order",
        states={
            "pay": State(initial=True, **parts),
            "big": State(terminal=True),
            "done": State(terminal=True),
            "manual": State(slots=[Slot("fix", candidates=who.role("finance"))], then="done"),
        },
    )


def codes(**automatic_state: Any) -> tuple[str, ...]:
    return tuple(p.code for p in v.problems(flow(**automatic_state)))


def waiting(**wait_state: Any) -> Any:
    """A workflow whose initial state ``wait`` has one finance slot, then ``done``."""
    return define(
        "following",
        tracks="order",
        states={
            "wait": State(
                initial=True,
                slots=[Slot("x", candidates=who.role("finance"))],
                then="done",
                **wait_state,
            ),
            "done": State(terminal=True),
        },
    )


def waiting_codes(**wait_state: Any) -> list[str]:
    return [p.code for p in v.problems(waiting(**wait_state))]


def test_a_sound_automatic_state_loads() -> None:
    assert (
        codes(
            retry=Exponential(first=timedelta(seconds=10), max_attempts=5, jitter=0.2),
            on_error=[OnError("manual", errors=[ValueError])],
        )
        == ()
    )


@pytest.mark.parametrize(
    ("parts", "code"),
    [
        ({"action": "not a path"}, "BAD_ACTION"),
        ({"on_success": []}, "NO_SUCCESS_ROUTE"),
        ({"on_success": [Route("big", when=subject.amount > 1)]}, "NO_FALLBACK_ROUTE"),
        ({"on_success": [Route("done"), Route("big")]}, "ROUTE_SHADOWED"),
        ({"on_success": ["nowhere"]}, "UNKNOWN_STATE"),
        ({"on_error": [OnError("nowhere")]}, "UNKNOWN_STATE"),
        ({"slots": [Slot("x", candidates=who.role("finance"))]}, "ENTRY_ACTION_ROUTES"),
        ({"then": ["done"]}, "AUTOMATIC_WITH_ROUTES"),
        ({"retry": Fixed(wait=timedelta(0))}, "BAD_RETRY"),
        ({"retry": Fixed(wait=timedelta(seconds=1), max_attempts=0)}, "BAD_RETRY"),
        ({"retry": Fixed(wait=timedelta(seconds=1), jitter=2)}, "BAD_RETRY"),
        ({"retry": Fixed(wait=timedelta(seconds=1), time="business")}, "BAD_RETRY"),
        ({"retry": "three times"}, "BAD_RETRY"),
    ],
)
def test_each_mistake_is_named(parts: dict[str, Any], code: str) -> None:
    assert code in codes(**parts)


def test_no_retry_block_where_nothing_is_scheduled() -> None:
    assert "RETRY_WITHOUT_ACTION" in waiting_codes(retry=Fixed(wait=timedelta(seconds=1)))


@pytest.mark.parametrize(
    ("interval", "until", "ok"),
    [
        (real.days(7), real.days(28), True),
        (real.days(7), real.days(7), False),  # until strictly longer than the interval
        (real.days(7), real.days(1), False),
    ],
)
def test_every_until_is_longer_than_its_interval(interval: Any, until: Any, ok: bool) -> None:
    codes = waiting_codes(every=[every(interval, action=ACTION, until=until)])
    assert ("BAD_EVERY" not in codes) is ok


def test_a_timeout_action_may_not_also_move() -> None:
    d = waiting(timeouts=[timeout(real.hours(1), action=ACTION, move_to="done")])
    assert "BAD_TIMEOUT" in [p.code for p in v.problems(d)]
    with pytest.raises(DefinitionError):
        v.validate(d)


def test_the_document_carries_the_action_only_when_declared() -> None:
    doc = flow(retry=Fixed(wait=timedelta(seconds=5), max_attempts=2)).to_document()
    state = doc["states"][0]
    assert state["action"] == ACTION
    assert state["retry"]["kind"] == "fixed"
    assert state["retry"]["wait"] == 5
    assert "action" not in doc["states"][1]  # older digests stay as they were


def _start() -> tuple[Any, RunView]:
    d = flow(on_error=[OnError("manual", errors=["ValueError"])])
    out = engine.start(
        d, run_id="r1", subject={"amount": 5}, now=NOW, actor="app", new_id=lambda: "s1"
    )
    return d, out.run


def test_an_automatic_state_waits_for_its_action() -> None:
    _, run = _start()
    assert (run.state, run.status) == ("pay", "active")


def test_success_stores_the_result_and_takes_the_first_matching_route() -> None:
    d, run = _start()
    out = automatic.succeeded(
        d, run, (), result={"amount": 500}, details={}, now=NOW, new_id=lambda: "s2"
    )
    assert out.run.state == "big"
    assert out.run.results == {"pay": {"amount": 500}}
    assert [e.kind for e in out.audit][:1] == ["step.succeeded"]


def test_a_final_failure_takes_the_route_of_its_class_or_stays() -> None:
    d, run = _start()
    routed = automatic.failed(
        d, run, (), error_classes=["ValueError", "Exception"], details={}, now=NOW,
        new_id=lambda: "s3",
    )  # fmt: skip
    assert routed.run.state == "manual"
    stays = automatic.failed(
        d, run, (), error_classes=["KeyError", "Exception"], details={}, now=NOW,
        new_id=lambda: "s4",
    )  # fmt: skip
    assert stays.run.state == "pay"
    assert [e.kind for e in stays.audit] == ["step.parked"]


def test_a_later_slot_label_reads_the_result() -> None:
    d = define(
        "paying",
        tracks="order",
        states={
            "pay": State(initial=True, action=ACTION, on_success=["check"]),
            "check": State(
                slots=[
                    Slot(
                        "check",
                        label="Check payment {result.pay.id} of {subject.amount}",
                        candidates=who.role("finance"),
                    )
                ],
                then="done",
            ),
            "done": State(terminal=True),
        },
    )
    assert v.problems(d) == []
    out = engine.start(d, run_id="r", subject={"amount": 5}, now=NOW, actor=None, new_id=str)
    ids = iter(["s1", "s2"])
    done = automatic.succeeded(
        d, out.run, (), result={"id": "PAY-7"}, details={}, now=NOW, new_id=lambda: next(ids)
    )
    [slot] = done.created
    assert slot.label == "Check payment PAY-7 of 5"
