"""The pure engine: runs through states, slots opening, completing, routing."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from taskflow import Field, Move, Precondition, Route, Slot, State, Workflow, payload, subject, who
from taskflow.core.definition import audience as au
from taskflow.core.runs import engine, refusals
from taskflow.core.runs.model import CANCELLED, CLAIMED, OPEN, PENDING, SATISFIED, Outcome, SlotView
from taskflow.core.slots import slots as slot_moves

NOW = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)


class Review(Workflow):
    """Two checks, the second after the first; a fan-out of signatures; a route by decision."""

    name = "review"
    version = 1
    tracks = "doc"

    drafting = State(
        initial=True,
        slots=[
            Slot(
                "check",
                fields=[Field.choice("decision", ["ok", "no"])],
                candidates=who.role("checker") - who.id(subject.author),
                delegates=who.role("lead"),
                label="Check {subject.title}",
            ),
            Slot("countersign", after=["check"], candidates=who.role("lead")),
            Slot("legal", armed=subject.sensitive == True, candidates=who.role("legal")),  # noqa: E712
        ],
        then=[Route("rejected", when=payload.check.decision == "no"), Route("signing")],
        moves=[
            Move(
                "abandon",
                to="rejected",
                by=who.role("lead"),
                preconditions=[Precondition("has a title", subject.title.is_set())],
            )
        ],
    )
    signing = State(
        slots=[Slot("sign", foreach=subject.signers, candidates=who.id(subject.author))],
        then=[Route("done", when=subject.final == True), Route("approved_pending")],  # noqa: E712
    )
    approved_pending = State(
        slots=[Slot("confirm", candidates=who.role("lead"))], then=[Route("done")]
    )
    done = State(terminal=True)
    rejected = State(terminal=True)


DEFINITION = Review.definition
CHECKER = au.principal_keys({"id": "carol", "roles": ["checker"]})
AUTHOR_KEYS = au.principal_keys({"id": "alice", "roles": ["checker"]})
LEAD = {"id": "lee", "roles": ["lead"], "groups": [], "attributes": {}}
LEAD_KEYS = au.principal_keys(LEAD)


def ids() -> Any:
    counter = itertools.count(1)
    return lambda: f"id-{next(counter)}"


class Run:
    """Drives one run through the engine, keeping the slots like the store would."""

    def __init__(self, subject_data: dict[str, Any]) -> None:
        self.new_id = ids()
        self.now = NOW
        outcome = engine.start(
            DEFINITION,
            run_id="run-1",
            subject=subject_data,
            now=NOW,
            actor="app",
            new_id=self.new_id,
        )
        self.slots: dict[str, SlotView] = {}
        self.apply(outcome)

    def apply(self, outcome: Outcome) -> Outcome:
        self.run = outcome.run
        for view in (*outcome.created, *outcome.changed):
            self.slots[view.id] = view
        self.last = outcome
        return outcome

    def live(self, name: str | None = None) -> list[SlotView]:
        return [
            s
            for s in self.slots.values()
            if s.visit == self.run.visit and (name is None or s.name == name)
        ]

    def one(self, name: str) -> SlotView:
        (view,) = self.live(name)
        return view

    def complete(
        self,
        name: str,
        data: dict[str, Any] | None = None,
        actor: str = "carol",
        keys: frozenset[str] = CHECKER,
        slot: SlotView | None = None,
    ) -> Outcome:
        target = slot or self.one(name)
        return self.apply(
            engine.deposit(
                DEFINITION,
                self.run,
                self.slots.values(),
                slot_id=target.id,
                event=None,
                payload=data or {},
                actor=actor,
                actor_keys=keys,
                expected_version=None,
                now=self.now,
                new_id=self.new_id,
            )
        )

    def move(self, name: str, principal: dict[str, Any]) -> Outcome:
        return self.apply(
            engine.move(
                DEFINITION,
                self.run,
                self.slots.values(),
                name=name,
                data=None,
                principal=principal,
                now=self.now,
                new_id=self.new_id,
            )
        )

    def change_subject(self, subject_data: dict[str, Any]) -> Outcome:
        return self.apply(
            engine.change_subject(
                DEFINITION,
                self.run,
                self.slots.values(),
                subject=subject_data,
                now=self.now,
                actor="app",
                new_id=self.new_id,
            )
        )

    def kinds(self) -> list[str]:
        return [entry.kind for entry in self.last.audit]


def test_start_opens_slots_and_keeps_after_slots_pending() -> None:
    run = Run({"title": "T", "author": "alice"})
    assert run.run.state == "drafting"
    assert run.one("check").status == OPEN
    assert run.one("check").label == "Check T"
    assert run.one("countersign").status == PENDING
    assert run.live("legal") == []  # not armed
    assert run.kinds() == ["run.started", "state.entered", "slot.opened", "slot.pending"]


def test_candidates_compile_with_separation_of_duties() -> None:
    run = Run({"title": "T", "author": "alice"})
    check = run.one("check")
    assert check.audience.admits(CHECKER)
    assert not check.audience.admits(AUTHOR_KEYS)


def test_after_opens_the_pending_slot_and_completion_routes() -> None:
    run = Run({"title": "T", "author": "alice", "signers": ["x", "y"]})
    run.complete("check", {"decision": "ok"})
    assert run.one("countersign").status == OPEN
    assert "slot.opened" in run.kinds()
    run.complete("countersign", actor="lee", keys=LEAD_KEYS)
    assert run.run.state == "signing"
    signs = run.live("sign")
    assert [s.item for s in signs] == ["x", "y"]
    assert all(s.status == OPEN for s in signs)


def test_first_matching_route_wins() -> None:
    run = Run({"title": "T", "author": "alice"})
    run.complete("check", {"decision": "no"})
    assert run.run.state == "drafting"  # countersign still open: not done yet
    run.complete("countersign", actor="lee", keys=LEAD_KEYS)
    assert run.run.state == "rejected"
    assert run.run.status == "completed"


def test_foreach_completes_when_every_element_is_satisfied() -> None:
    run = Run({"title": "T", "author": "alice", "signers": ["x", "y"], "final": True})
    run.complete("check", {"decision": "ok"})
    run.complete("countersign", actor="lee", keys=LEAD_KEYS)
    author = au.principal_keys({"id": "alice"})
    first, second = run.live("sign")
    run.complete("sign", actor="alice", keys=author, slot=first)
    assert run.run.state == "signing"
    run.complete("sign", actor="alice", keys=author, slot=second)
    assert run.run.state == "done"


def test_a_foreach_over_nothing_is_done_at_once() -> None:
    run = Run({"title": "T", "author": "alice", "signers": []})
    run.complete("check", {"decision": "ok"})
    run.complete("countersign", actor="lee", keys=LEAD_KEYS)
    assert run.run.state == "approved_pending"


def test_payload_is_validated_and_nothing_changes_on_refusal() -> None:
    run = Run({"title": "T", "author": "alice"})
    with pytest.raises(Exception, match="decision: expected one of ok, no"):
        run.complete("check", {"decision": "maybe"})
    assert run.one("check").status == OPEN


def test_only_candidates_complete_an_open_slot() -> None:
    run = Run({"title": "T", "author": "alice"})
    with pytest.raises(refusals.NotCandidate, match="not a candidate"):
        run.complete("check", {"decision": "ok"}, actor="alice", keys=AUTHOR_KEYS)


def test_a_claimed_slot_is_completed_by_its_holder_only() -> None:
    run = Run({"title": "T", "author": "alice"})
    claimed = slot_moves.claim(run.one("check"), "carol", CHECKER, NOW, expected=1)
    run.slots[claimed.id] = claimed
    other = au.principal_keys({"id": "dave", "roles": ["checker"]})
    with pytest.raises(refusals.NotHolder, match="claimed by 'carol'"):
        run.complete("check", {"decision": "ok"}, actor="dave", keys=other)
    run.complete("check", {"decision": "ok"})
    assert run.slots[claimed.id].status == SATISFIED


def test_subject_change_arms_and_disarms_slots() -> None:
    run = Run({"title": "T", "author": "alice"})
    outcome = run.change_subject({"title": "T", "author": "alice", "sensitive": True})
    assert run.one("legal").status == OPEN
    assert [e.kind for e in outcome.audit][:2] == ["subject.updated", "slot.opened"]
    run.change_subject({"title": "T", "author": "alice"})
    assert run.one("legal").status == CANCELLED
    assert "slot.disarmed" in run.kinds()


def test_moves_check_who_and_preconditions() -> None:
    run = Run({"author": "alice"})
    with pytest.raises(refusals.MoveNotAllowed, match="it is for any of role:lead"):
        run.move("abandon", {"id": "carol", "roles": ["checker"]})
    with pytest.raises(refusals.MoveNotAllowed, match="'has a title' is not met"):
        run.move("abandon", LEAD)
    with pytest.raises(refusals.MoveNotAllowed, match="its moves are: abandon"):
        run.move("teleport", LEAD)
    run = Run({"author": "alice", "title": "T"})
    run.move("abandon", LEAD)
    assert run.run.state == "rejected"
    assert all(s.status == CANCELLED for s in run.slots.values())


def test_cancel_ends_the_run_and_cancels_live_slots() -> None:
    run = Run({"author": "alice", "title": "T"})
    run.apply(
        engine.cancel(
            DEFINITION,
            run.run,
            run.slots.values(),
            reason="duplicate",
            now=NOW,
            actor="lee",
            new_id=run.new_id,
        )
    )
    assert run.run.status == "cancelled"
    assert {s.status for s in run.slots.values()} == {CANCELLED}
    with pytest.raises(refusals.RunNotActive):
        run.complete("check", {"decision": "ok"})


class Unrouted(Workflow):
    name = "unrouted"
    version = 1
    tracks = "thing"
    start = State(
        initial=True,
        slots=[Slot("do", candidates=who.anyone())],
        then=[Route("big", when=subject.size > 10), Route("small", when=subject.size <= 10)],
    )
    big = State(terminal=True)
    small = State(terminal=True)


def unrouted_done() -> tuple[Outcome, Callable[[], str]]:
    """An ``Unrouted`` run whose one slot is done while no route matches: (that outcome, the
    run's id maker)."""
    new_id = ids()
    started = engine.start(
        Unrouted.definition, run_id="r", subject={}, now=NOW, actor=None, new_id=new_id
    )
    (slot,) = started.created
    done = engine.deposit(
        Unrouted.definition,
        started.run,
        started.created,
        slot_id=slot.id,
        event=None,
        payload={},
        actor="x",
        actor_keys=frozenset({"any", "user:x"}),
        expected_version=None,
        now=NOW,
        new_id=new_id,
    )
    return done, new_id


def unrouted_subject(done: Outcome, subject_data: dict[str, Any], new_id: Any) -> Outcome:
    """The subject of :func:`unrouted_done`'s run changed an hour later."""
    return engine.change_subject(
        Unrouted.definition,
        done.run,
        [*done.changed],
        subject=subject_data,
        now=NOW + timedelta(hours=1),
        actor="app",
        new_id=new_id,
    )


def test_a_route_that_matches_nothing_is_on_the_timeline_and_the_run_waits() -> None:
    done, new_id = unrouted_done()
    assert done.run.state == "start"
    unmatched = [e for e in done.audit if e.kind == "route.unmatched"]
    assert unmatched
    assert "no route matched" in (unmatched[0].reason or "")
    # The subject gains the missing field: the same rule now routes.
    moved = unrouted_subject(done, {"size": 3}, new_id)
    assert moved.run.state == "small"


def _redirect_if_vip(context: Any) -> str | None:
    return "fast" if context.subject.get("vip") else None


class Redirecting(Workflow):
    name = "redirecting"
    version = 1
    tracks = "thing"
    intake = State(
        initial=True,
        on_enter=_redirect_if_vip,
        redirects=["fast"],
        slots=[Slot("triage", candidates=who.anyone())],
        then=[Route("fast")],
    )
    fast = State(terminal=True)


def test_an_enter_hook_may_redirect() -> None:
    outcome = engine.start(
        Redirecting.definition, run_id="r", subject={"vip": True}, now=NOW, actor=None, new_id=ids()
    )
    assert outcome.run.state == "fast"
    assert "state.redirected" in [e.kind for e in outcome.audit]
    assert outcome.created == ()


def test_claim_release_assign_rules() -> None:
    run = Run({"title": "T", "author": "alice"})
    check = run.one("check")
    with pytest.raises(refusals.StaleVersion, match="version 7"):
        slot_moves.claim(check, "carol", CHECKER, NOW, expected=7)
    with pytest.raises(refusals.NotCandidate):
        slot_moves.claim(check, "alice", AUTHOR_KEYS, NOW, expected=None)
    claimed = slot_moves.claim(check, "carol", CHECKER, NOW, expected=None)
    assert (claimed.status, claimed.holder, claimed.version) == (CLAIMED, "carol", 2)
    with pytest.raises(refusals.AlreadyClaimed, match="claimed by 'carol'"):
        slot_moves.claim(claimed, "dave", CHECKER, NOW, expected=None)
    with pytest.raises(refusals.NotHolder):
        slot_moves.release(claimed, "dave", CHECKER, NOW)
    dave = au.principal_keys({"id": "dave", "roles": ["checker"]})
    # A delegate hands it over; the author may never get it.
    with pytest.raises(refusals.NotCandidate, match="'alice' is not a candidate"):
        slot_moves.assign(claimed, "lee", LEAD_KEYS, "alice", AUTHOR_KEYS, NOW, None)
    moved = slot_moves.assign(claimed, "lee", LEAD_KEYS, "dave", dave, NOW, None)
    assert moved.holder == "dave"
    with pytest.raises(refusals.NotDelegate):
        slot_moves.assign(moved, "carol", CHECKER, "carol", CHECKER, NOW, None)
    released = slot_moves.release(moved, "dave", dave, NOW)
    assert (released.status, released.holder) == (OPEN, None)
