"""What start-up decides about loaded definitions against the deployed ones (pure)."""

from __future__ import annotations

from taskflow.core.versions import deployments as d


def _loaded(version: int, digest: str, **doc: object) -> d.Loaded:
    return d.Loaded("expense-approval", version, digest, {"version": version, **doc})


def _recorded(version: int, digest: str, **doc: object) -> d.Recorded:
    return d.Recorded("expense-approval", version, digest, {"version": version, **doc})


def test_new_versions_are_recorded_and_unchanged_ones_pass() -> None:
    plan = d.plan([_loaded(1, "a"), _loaded(2, "b")], [_recorded(1, "a")], {})
    assert [(x.version) for x in plan.new] == [2]
    assert plan.drifts == ()
    assert plan.missing == ()


def test_a_changed_digest_at_one_version_is_drift_with_a_diff() -> None:
    plan = d.plan([_loaded(1, "b", label="Pay")], [_recorded(1, "a", label="Review")], {})
    (drift,) = plan.drifts
    assert (drift.recorded_digest, drift.loaded_digest) == ("a", "b")
    assert '-  "label": "Review",' in drift.diff
    assert '+  "label": "Pay",' in drift.diff
    message = d.drift_message(plan.drifts)
    assert "'expense-approval' version 1 changed" in message
    assert "bump the version" in message


def test_a_long_diff_is_cut() -> None:
    many = {f"k{i}": i for i in range(100)}
    lines = d.diff({}, many, limit=10)
    assert len(lines) == 11
    assert lines[-1].startswith("... (")


def test_missing_versions_count_only_live_runs() -> None:
    live = {("expense-approval", 1): 3, ("expense-approval", 2): 1, ("old", 4): 0}
    plan = d.plan([_loaded(2, "b")], [], live)
    assert plan.missing == (d.Missing("expense-approval", 1, 3),)
    assert "'expense-approval' version 1: 3 live runs" in d.missing_message(plan.missing)


def test_a_missing_version_is_let_go_only_when_a_migration_covers_every_parked_state() -> None:
    live = {("expense-approval", 1): 5}
    states = {("expense-approval", 1, "submitted"): 3, ("expense-approval", 1, "payment"): 2}
    covering = {("expense-approval", 1): (2, frozenset({"submitted", "payment", "paid"}))}
    plan = d.plan([_loaded(2, "b")], [], live, states, covering)
    assert plan.missing == ()
    assert plan.migrating == (d.Missing("expense-approval", 1, 5, 2),)
    assert "'taskflow runs migrate expense-approval --to 2 --apply'" in d.migrating_message(
        plan.migrating
    )
    partial = {("expense-approval", 1): (2, frozenset({"submitted"}))}
    plan = d.plan([_loaded(2, "b")], [], live, states, partial)
    assert plan.migrating == ()
    assert plan.missing == (d.Missing("expense-approval", 1, 5, 2, ("payment",)),)
    assert "version 2's migration has no step for state(s) payment" in d.missing_message(
        plan.missing
    )
