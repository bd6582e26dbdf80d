"""Automatic steps as an outside client sees them: a workflow file of our own (copied to a
temporary folder), a real ``taskflow serve`` without its in-process worker and two real
``taskflow worker`` processes on one database, driven only over HTTP GraphQL.

Covered: a success (its result read by an ``on_success`` condition and a slot label), a
transient error retried under Fixed and Exponential policies then succeeding, a final
error class routed at once, two ``on_error`` classes (the first match wins), a per-attempt
timeout, an exhausted step without ``on_error`` parked, listed and retried by an operator,
an action on entry beside a slot, ``every`` firing while the run stays and stopping after
``until``, and ``steps.once`` replayed after a retry; then actions that misbehave (results
that are not JSON, too large, NaN or U+0000, SystemExit, CancelledError, unprintable
errors), Linear and ``transient=``, ``ROUTE_UNMATCHED``, an action on entry discarded or
parked, a timeout's action, ``every`` and ``steps.once`` across re-entered states, and a
worker stopped mid-action. The workers run on the real clock with waits of a second or
two; every wait for them is a bounded poll of the API (harness: ``blackbox_harness.py``).
"""

from __future__ import annotations

import signal
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.acceptance import blackbox_harness as harness
from tests.acceptance.blackbox_harness import (
    ATTENTION,
    GOTO,
    RETRY,
    UNMATCHED,
    Box,
    assert_waits,
    gaps,
    kinds,
    settled,
)


@pytest.fixture
def box(database_url: str, tmp_path: Path) -> Iterator[Box]:
    with harness.running(database_url, tmp_path) as started:
        yield started


@pytest.mark.slow
def test_automatic_steps_black_box(box: Box) -> None:
    started = time.monotonic()
    small = box.start_run("box-fixed", "S-1", plan=["ok"], amount=40)
    large = box.start_run("box-fixed", "L-1", plan=["boom", "boom", "ok"], amount=500)
    refused = box.start_run("box-fixed", "R-1", plan=["refused"])
    fraud = box.start_run("box-fixed", "F-1", plan=["fraud"])
    backoff = box.start_run("box-exponential", "E-1", plan=["boom", "boom", "ok"])
    slow = box.start_run("box-timeout", "T-1", plan=["slow", "ok"])
    parked = box.start_run("box-parked", "P-1")
    once = box.start_run("box-once", "O-1", plan=["boom", "boom", "ok"])
    beside = box.start_run("box-beside", "B-1", delay=3)

    # An action on entry beside a slot: the slot is open at once, the action still running.
    view = box.run(beside)
    assert view["state"] == "asking"
    assert [(s["name"], s["status"]) for s in view["slots"]] == [("answer", "OPEN")]
    assert [s["status"] for s in view["steps"] if s["kind"] == "entry"] in (["DUE"], ["RUNNING"]), (
        view["steps"]
    )

    # Success: the result is stored, read by the on_success condition and by a label.
    view = box.until(small, settled("paid"), "the small payment to succeed")
    [step] = view["steps"]
    assert (step["status"], step["attemptCount"]) == ("SUCCEEDED", 1)
    assert step["result"] == {"payment_id": "PAY-S-1", "amount": 40, "attempt": 1}
    assert "step.succeeded" in kinds(view)

    view = box.until(large, settled("large"), "the large payment to succeed on attempt 3")
    [step] = view["steps"]
    assert (step["status"], step["attemptCount"]) == ("SUCCEEDED", 3)
    tries = sorted(step["attempts"], key=lambda a: a["attempt"])
    assert [a["outcome"] for a in tries] == ["failed", "failed", "succeeded"]
    failed = [a for a in step["attempts"] if a["outcome"] == "failed"]
    assert {(a["errorClass"], a["errorMessage"]) for a in failed} == {
        ("Flaky", "the payment service answered 503 on attempt 1"),
        ("Flaky", "the payment service answered 503 on attempt 2"),
    }
    assert all(gap >= 0.9 for gap in gaps(step)), gaps(step)  # Fixed: a second apart
    assert [s["label"] for s in view["slots"]] == ["Look at PAY-L-1 of 500"]
    assert kinds(view).count("step.retrying") == 2

    # A final class: one attempt, its on_error route. Two classes, two routes: first match.
    view = box.until(refused, settled("refused_desk"), "the refusal to be routed")
    [step] = view["steps"]
    assert (step["status"], step["attemptCount"]) == ("FAILED", 1)
    assert step["attempts"][0]["errorClass"] == "Refused"
    assert "step.failed" in kinds(view)
    view = box.until(fraud, settled("fraud_desk"), "the fraud (a Refused) to be routed")
    [step] = view["steps"]
    assert (step["attemptCount"], step["attempts"][0]["errorClass"]) == (1, "Fraud")

    # Exponential: waits of 1 s then 2 s.
    view = box.until(backoff, settled("paid"), "the exponential retries to succeed")
    [step] = view["steps"]
    assert step["attemptCount"] == 3
    assert_waits(view, step, [1, 2])

    # A per-attempt timeout: the slow attempt is cut after a second, the next one succeeds.
    view = box.until(slow, settled("paid"), "the timed-out payment to succeed on attempt 2")
    [step] = view["steps"]
    tries = sorted(step["attempts"], key=lambda a: a["attempt"])
    assert [a["outcome"] for a in tries] == ["failed", "succeeded"]
    assert tries[0]["errorClass"] == "TimeoutError", tries[0]
    assert tries[0]["durationMs"] < 5000

    # Exhausted, no on_error: parked, listed, mended and retried by an operator.
    view = box.until(
        parked, lambda v: [s["status"] for s in v["steps"]] == ["PARKED"], "the ledger to park"
    )
    [step] = view["steps"]
    assert view["state"] == "sync"
    assert step["attemptCount"] == 2
    assert step["lastError"]
    assert "the ledger is read-only" in step["lastError"]
    assert "step.parked" in kinds(view)
    listed = box.post(box.admin, ATTENTION)["needsAttention"]["edges"]
    assert [(e["node"]["runId"], e["node"]["state"]) for e in listed] == [(parked, "sync")]
    (box.folder("P-1") / "mended").touch()
    retried = box.post(box.admin, RETRY, {"id": step["id"]})["retryStep"]
    assert retried["__typename"] == "RetryStepSuccess", retried
    view = box.until(parked, settled("synced"), "the retried ledger sync to succeed")
    [step] = view["steps"]
    assert step["status"] == "SUCCEEDED"
    assert step["result"] == {"synced": True}
    assert "step.reopened" in kinds(view)
    assert box.post(box.admin, ATTENTION)["needsAttention"]["edges"] == []

    # steps.once: recorded on the first attempt, replayed on the retries.
    view = box.until(once, settled("opened"), "the ticket step to succeed")
    [step] = view["steps"]
    assert step["result"] == {"ticket": "TICKET-O-1", "attempt": 3}
    assert len((box.folder("O-1") / "once.txt").read_text().splitlines()) == 1  # called once
    assert kinds(view).count("step.once") == 1

    # The action beside the slot has landed; the run did not move for it.
    view = box.until(
        beside,
        lambda v: any(s["kind"] == "entry" and s["status"] == "SUCCEEDED" for s in v["steps"]),
        "the action on entry to finish",
    )
    assert view["state"] == "asking"
    [action] = [s for s in view["steps"] if s["kind"] == "entry"]
    assert action["result"] == {"noted": "B-1"}

    # every 2 s until 5 s: two follow-ups while the run stays, then none armed.
    view = box.until(
        beside,
        lambda v: (
            sum(s["kind"] == "every" and s["status"] == "SUCCEEDED" for s in v["steps"]) == 2
            and not any(t["kind"] == "every" and t["state"] == "ARMED" for t in v["timers"])
        ),
        "two follow-ups and no more armed",
    )
    assert view["state"] == "asking"
    assert len((box.folder("B-1") / "followups.txt").read_text().splitlines()) == 2
    assert time.monotonic() - started < 120

    # The workers counted every attempt, by workflow and outcome.
    counted = box.metrics("taskflow_step_attempts_total")
    assert counted['{outcome="retrying",workflow="box-fixed"}'] == 2  # L-1's two failures
    assert counted['{outcome="failed",workflow="box-fixed"}'] == 2  # R-1 and F-1
    assert counted['{outcome="parked",workflow="box-parked"}'] == 1


#: What a misbehaving action (``odd`` in the workflow file) leaves: one failed attempt and
#: its error, class and message, and a parked step; never a dead worker, nor a batch whose
#: write fails (NaN and U+0000, which PostgreSQL refuses, are refused in the attempt).
ODD = {
    "set": ("TypeError", "Object of type set is not JSON serializable"),
    "unprintable": ("_Unprintable", "_Unprintable"),
    "exit": ("SystemExit", "3"),
    "cancelled": ("CancelledError", "CancelledError"),
    "huge": ("StepResultTooLarge", "the action returned 3000012 bytes of JSON"),
    "nan": ("StepValueInvalid", "the action's result holds NaN or Infinity"),
    "nul": ("StepValueInvalid", "the action's result holds the character U+0000"),
    "nul-error": ("Flaky", "bad byte \\x00 here"),
    "once-set": ("TypeError", "Object of type set is not JSON serializable"),
    "once-nan": ("StepValueInvalid", "the value of steps.once('rate') holds NaN"),
    "once-long-name": ("StepValueInvalid", "steps.once: the name 'nnnn"),
}


@pytest.mark.slow
def test_a_misbehaving_action_fails_its_attempt_and_never_stops_a_worker(box: Box) -> None:
    started = {kind: box.start_run("box-odd", f"X-{kind}", odd=kind) for kind in [*ODD, "fine"]}
    for kind, (cls, says) in ODD.items():
        view = box.until(
            started[kind],
            lambda v: [s["status"] for s in v["steps"]] == ["PARKED"],
            f"the {kind} action to fail and park",
        )
        [step] = view["steps"]
        [attempt] = step["attempts"]
        assert (attempt["outcome"], attempt["errorClass"]) == ("failed", cls), kind
        assert attempt["errorMessage"].startswith(says), attempt
    assert box.until(started["fine"], settled("done"), "the good one to succeed")
    assert all(p.poll() is None for p in box.workers.processes), box.workers.output()
    assert "could not be" not in box.workers.output()  # no step nor batch left to its lease


@pytest.mark.slow
def test_more_policies_routes_and_actions_beside_slots(box: Box) -> None:
    linear = box.start_run("box-linear", "LI-1", plan=["boom", "boom", "ok"])
    transient = box.start_run("box-transient", "TR-1", plan=["refused"])
    unmatched = box.start_run("box-unmatched", "UN-1", amount=5)
    left = box.start_run("box-entry", "EL-1", delay=3)
    failing = box.start_run("box-entry", "EF-1", plan=["boom"])
    # The run leaves the state while its action on entry runs: the outcome changes nothing.
    assert (
        box.post(box.admin, GOTO, {"id": left, "state": "done"})["goto"]["__typename"]
        == "RunSuccess"
    )

    # Linear: waits of 1 s, then 2 s.
    view = box.until(linear, settled("paid"), "the linear retries to succeed")
    [step] = view["steps"]
    assert_waits(view, step, [1, 2])
    # retryStep on a step that is not parked, and by someone without the power: refused.
    again = box.post(box.admin, RETRY, {"id": step["id"]})["retryStep"]
    assert (again["__typename"], again["code"]) == ("StepNotParked", "STEP_NOT_PARKED")

    # transient=[Flaky]: any other class is not retried.
    view = box.until(transient, settled("manual"), "the refusal to go to a person at once")
    assert [(s["attemptCount"], s["status"]) for s in view["steps"]] == [(1, "FAILED")]

    # A result no route matches: the run waits, listed as ROUTE_UNMATCHED.
    view = box.until(
        unmatched, lambda v: "route.unmatched" in kinds(v), "the unmatched route to show"
    )
    assert view["state"] == "pay"
    listed = box.post(box.admin, UNMATCHED)["needsAttention"]["edges"]
    assert [e["node"]["runId"] for e in listed] == [unmatched]

    # Left before its action on entry finished: discarded, the step cancelled.
    view = box.until(
        left,
        lambda v: [a["outcome"] for s in v["steps"] for a in s["attempts"]] == ["discarded"],
        "the late outcome to be discarded",
    )
    assert view["state"] == "done"
    assert [s["status"] for s in view["steps"]] == ["CANCELLED"]

    # An action on entry that fails every attempt parks beside the open slot; the timeout's
    # action (after a second) ran once and kept the run there.
    view = box.until(
        failing,
        lambda v: (
            sorted((s["kind"], s["status"]) for s in v["steps"])
            == [("entry", "PARKED"), ("timeout", "SUCCEEDED")]
        ),
        "the entry action to park and the timeout action to run",
    )
    assert view["state"] == "asking"
    assert [(s["name"], s["status"]) for s in view["slots"]] == [("answer", "OPEN")]
    [parked] = [s for s in view["steps"] if s["kind"] == "entry"]
    assert parked["action"] == "pay"  # as written in the workflow file, not a module name
    listed = box.post(box.admin, ATTENTION)["needsAttention"]["edges"]
    assert [e["node"]["detail"] for e in listed] == [
        "entry pay failed 2 time(s): Flaky: the payment service answered 503 on attempt 2"
    ]
    refused = box.post(box.app, RETRY, {"id": parked["id"]})["retryStep"]
    assert (refused["__typename"], refused["code"]) == ("NotAllowed", "FORBIDDEN")


def _every_done(count: int, timers: int) -> Callable[[dict[str, Any]], bool]:
    """``count`` every steps ended and ``timers`` every timers fired three times, none armed."""

    def holds(view: dict[str, Any]) -> bool:
        ended = [
            s
            for s in view["steps"]
            if s["kind"] == "every" and s["status"] in ("SUCCEEDED", "PARKED")
        ]
        fired = [t for t in view["timers"] if t["kind"] == "every"]
        return (
            len(ended) == count
            and [(t["state"], t["fired"]) for t in fired] == [("FIRED", 3)] * timers
        )

    return holds


@pytest.mark.slow
def test_every_starts_anew_on_reentry_and_once_holds_across_visits(box: Box) -> None:
    run_id = box.start_run("box-loop", "LO-1")
    # Every second until 3.5 s: three firings; the second fails and parks, the third still runs.
    view = box.until(run_id, _every_done(3, 1), "three follow-ups of the first visit")
    nags = [s for s in view["steps"] if s["kind"] == "every"]
    assert [(s["status"], s["result"]) for s in reversed(nags)] == [
        ("SUCCEEDED", {"nag": 1}),
        ("PARKED", None),
        ("SUCCEEDED", {"nag": 3}),
    ]
    assert view["state"] == "waiting"
    # Out and back in: a new visit, its own three firings; the entry action runs again and
    # steps.once gives it the ticket recorded on the first visit.
    for state in ("aside", "waiting"):
        moved = box.post(box.admin, GOTO, {"id": run_id, "state": state})["goto"]
        assert moved["__typename"] == "RunSuccess", moved
    view = box.until(run_id, _every_done(6, 2), "three more follow-ups after re-entering")
    entries = [s for s in view["steps"] if s["kind"] == "entry"]
    assert [s["result"] for s in entries] == [{"ticket": "TICKET-LO-1"}] * 2
    assert len((box.folder("LO-1") / "once.txt").read_text().splitlines()) == 1
    assert kinds(view).count("step.once") == 1
    # The parked firing belongs to the visit the run left: no longer needing attention.
    assert box.post(box.admin, ATTENTION)["needsAttention"]["edges"] == []


@pytest.mark.slow
def test_a_worker_stopped_mid_action_hands_its_step_back_at_once(box: Box) -> None:
    # The lease is the default 300 s: the step must not wait for it.
    run_id = box.start_run("box-fixed", "SIG-1", delay=3, amount=1)
    view = box.until(
        run_id, lambda v: v["steps"] and v["steps"][0]["status"] == "RUNNING", "the action"
    )
    holder = int(view["steps"][0]["attempts"][0]["worker"].rsplit(":", 1)[1])
    [victim] = [p for p in box.workers.processes if p.pid == holder]
    victim.send_signal(signal.SIGTERM)
    victim.wait(timeout=30)
    box.workers.processes.remove(victim)  # stopped on purpose
    view = box.until(run_id, settled("paid"), "the other worker to take the step at once")
    [step] = view["steps"]
    tries = sorted(step["attempts"], key=lambda a: a["attempt"])
    assert [a["outcome"] for a in tries] == ["lost", "succeeded"]
    assert tries[1]["worker"] != tries[0]["worker"]
