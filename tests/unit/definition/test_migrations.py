"""Run migrations declared in the DSL: checks at load and the plan (pure)."""

from __future__ import annotations

import pytest

from taskflow import Route, Slot, State, Workflow, business, migration, milestone, who
from taskflow.core.definition import migrations
from taskflow.core.definition.checks import migration_checks
from taskflow.core.definition.checks import validate as validation
from taskflow.service.versions import definitions


def _review(name: str = "review") -> Slot:
    return Slot(
        name,
        candidates=who.role("finance"),
        milestones=[milestone.finished(within=business.hours(4))],
    )


class ClaimV1(Workflow):
    name = "claim"
    version = 1
    tracks = "claim"
    submitted = State(initial=True, slots=[_review()], then=[Route("archived")])
    archived = State(slots=[Slot("file_it", candidates=who.role("finance"))], then=[Route("paid")])
    paid = State(terminal=True)


class ClaimV2(Workflow):
    name = "claim"
    version = 2
    tracks = "claim"
    migrations = [
        migration.from_version(
            1, submitted=migration.to("checked"), archived=migration.cancel("archiving retired")
        )
    ]
    checked = State(initial=True, slots=[_review("check")], then=[Route("paid")])
    paid = State(terminal=True)


def _codes(found: list[object]) -> list[str]:
    return sorted(p.code for p in found)  # type: ignore[attr-defined]


def test_a_sound_migration_is_in_the_document_and_the_digest() -> None:
    assert ClaimV2.definition is not None
    assert ClaimV1.definition is not None
    assert validation.problems(ClaimV2.definition) == []
    assert migration_checks.cross_problems(ClaimV2.definition, {1: ClaimV1.definition}) == []
    doc = ClaimV2.definition.to_document()
    assert doc["migrations"] == [
        {
            "from_version": 1,
            "states": {
                "submitted": {"kind": "to", "to": "checked"},
                "archived": {"kind": "cancel", "reason": "archiving retired"},
            },
        }
    ]
    # A definition without migrations keeps the document (and digest) it always had.
    assert "migrations" not in ClaimV1.definition.to_document()


def test_targets_and_stays_must_exist_and_cancels_need_a_reason() -> None:
    class Bad(Workflow):
        name = "claim"
        version = 2
        tracks = "claim"
        migrations = [
            migration.from_version(
                1,
                submitted=migration.to("nowhere"),
                archived=migration.stay,
                paid=migration.cancel(""),
            ),
            migration.from_version(3),
        ]
        checked = State(initial=True, slots=[_review("check")], then=[Route("paid")])
        paid = State(terminal=True)

    assert Bad.definition is not None
    assert _codes(validation.problems(Bad.definition)) == [
        "MIGRATION_REASON",
        "MIGRATION_STAY",
        "MIGRATION_TARGET",
        "MIGRATION_VERSION",
    ]


def test_every_live_state_of_the_earlier_version_is_covered_and_stays_keep_slots() -> None:
    class Partial(Workflow):
        name = "claim"
        version = 2
        tracks = "claim"
        migrations = [migration.from_version(1, submitted=migration.stay, gone=migration.stay)]
        submitted = State(initial=True, slots=[_review("other")], then=[Route("paid")])
        gone = State(then=[Route("paid")])
        paid = State(terminal=True)

    assert Partial.definition is not None
    assert ClaimV1.definition is not None
    found = migration_checks.cross_problems(Partial.definition, {1: ClaimV1.definition})
    assert _codes(found) == ["MIGRATION_SLOTS", "MIGRATION_UNCOVERED", "MIGRATION_UNKNOWN_STATE"]
    uncovered = next(p for p in found if p.code == "MIGRATION_UNCOVERED")
    assert "'archived'" in uncovered.message


def test_the_loader_checks_migrations_against_the_earlier_version(tmp_path: object) -> None:
    from pathlib import Path

    source = Path(str(tmp_path)) / "claims.py"
    source.write_text(
        "from taskflow import Route, Slot, State, Workflow, migration, who\n"
        "class V1(Workflow):\n"
        "    name = 'claim'\n    version = 1\n    tracks = 'claim'\n"
        "    a = State(initial=True, slots=[Slot('s', candidates=who.role('x'))],\n"
        "              then=[Route('z')])\n"
        "    z = State(terminal=True)\n"
        "class V2(Workflow):\n"
        "    name = 'claim'\n    version = 2\n    tracks = 'claim'\n"
        "    migrations = [migration.from_version(1)]\n"
        "    a = State(initial=True, slots=[Slot('s', candidates=who.role('x'))],\n"
        "              then=[Route('z')])\n"
        "    z = State(terminal=True)\n"
    )
    with pytest.raises(definitions.DefinitionError) as refused:
        definitions.load([str(source)], None)
    assert [p.code for p in refused.value.problems] == ["MIGRATION_UNCOVERED"]


def test_the_plan_says_per_state_what_happens_and_which_clocks_change() -> None:
    assert ClaimV2.definition is not None
    assert ClaimV1.definition is not None
    counts = {(1, "submitted"): 70_000, (1, "archived"): 5, (2, "checked"): 9}
    lines = migrations.plan(ClaimV2.definition, counts, {1: ClaimV1.definition})
    assert [
        (x.from_version, x.state, x.runs, x.step.describe() if x.step else None) for x in lines
    ] == [
        (1, "archived", 5, "cancel (archiving retired)"),
        (1, "submitted", 70_000, "to checked"),
    ]
    assert lines[1].effect == (
        "open slots closed as migrated (clocks stop: review); checked entered (new clocks: check)"
    )
    assert migrations.totals(lines) == {"cancel": 5, "to": 70_000}
    # Runs of a version no migration names stay where they are.
    (line,) = migrations.plan(ClaimV2.definition, {(0, "x"): 1}, {})
    assert line.step is None
    assert "stay on it" in line.effect


class ClaimV3(Workflow):
    """Version 1's states renamed: submitted is now triage, its review slot is assess."""

    name = "claim"
    version = 3
    tracks = "claim"
    migrations = [
        migration.from_version(
            1,
            submitted=migration.stay("triage", slots={"review": "assess"}),
            archived=migration.stay(restart_clocks=["finished"]),
        )
    ]
    triage = State(
        initial=True,
        slots=[_review("assess"), Slot("scan", candidates=who.role("finance"))],
        then=[Route("archived")],
    )
    archived = State(slots=[Slot("file_it", candidates=who.role("finance"))], then=[Route("paid")])
    paid = State(terminal=True)


def test_a_stay_may_rename_the_state_and_its_slots_and_restart_clocks() -> None:
    assert ClaimV3.definition is not None
    assert ClaimV1.definition is not None
    assert validation.problems(ClaimV3.definition) == []
    assert migration_checks.cross_problems(ClaimV3.definition, {1: ClaimV1.definition}) == []
    (m,) = ClaimV3.definition.to_document()["migrations"]
    assert m["states"] == {
        "submitted": {"kind": "stay", "to": "triage", "slots": {"review": "assess"}},
        "archived": {"kind": "stay", "restart_clocks": ["finished"]},
    }
    assert migration.stay(restart_clocks=True).restart == ("assigned", "finished")
    # A plain stay keeps its document (and so the digests of versions already deployed).
    assert migration.stay.to_json() == {"kind": "stay"}
    lines = migrations.plan(
        ClaimV3.definition, {(1, "submitted"): 4, (1, "archived"): 2}, {1: ClaimV1.definition}
    )
    assert [(x.state, x.step.describe() if x.step else None) for x in lines] == [
        ("archived", "stay (clocks restart: finished)"),
        ("submitted", "stay as triage (slots review -> assess)"),
    ]
    assert lines[1].effect == (
        "state, slots, holders and clock ledgers kept; the state is triage now; slots renamed "
        "review -> assess; new slots open: scan"
    )


def test_mapped_slots_must_exist_and_be_compatible() -> None:
    class Bad(Workflow):
        name = "claim"
        version = 2
        tracks = "claim"
        migrations = [
            migration.from_version(
                1,
                submitted=migration.stay(
                    "triage", slots={"review": "nowhere", "ghost": "scan"}, restart_clocks=["x"]
                ),
                archived=migration.stay(slots={"file_it": "scan"}),
            )
        ]
        triage = State(
            initial=True,
            slots=[Slot("scan", candidates=who.role("finance"), foreach=["a", "b"])],
            then=[Route("archived")],
        )
        archived = State(
            slots=[Slot("scan", candidates=who.role("finance"), foreach=["a", "b"])],
            then=[Route("paid")],
        )
        paid = State(terminal=True)

    assert Bad.definition is not None
    assert ClaimV1.definition is not None
    assert _codes(validation.problems(Bad.definition)) == [
        "MIGRATION_RESTART",
        "MIGRATION_SLOT_TARGET",
    ]
    found = migration_checks.cross_problems(Bad.definition, {1: ClaimV1.definition})
    assert _codes(found) == [
        "MIGRATION_SLOTS",  # ghost is not a slot of version 1's submitted
        "MIGRATION_SLOTS",  # review -> nowhere leaves review without a slot
        "MIGRATION_SLOT_INCOMPATIBLE",  # file_it opens once, scan per item
    ]
    assert any("cannot become 'scan'" in p.message for p in found)


def test_a_recorded_document_stands_in_for_a_version_no_longer_loaded() -> None:
    from taskflow.core.versions import shapes

    assert ClaimV1.definition is not None
    assert ClaimV3.definition is not None
    shape = shapes.from_document(ClaimV1.definition.to_document())
    assert migration_checks.cross_problems(ClaimV3.definition, {1: shape}) == []
    counts = {(1, "submitted"): 4}
    assert migrations.plan(ClaimV3.definition, counts, {1: shape}) == migrations.plan(
        ClaimV3.definition, counts, {1: ClaimV1.definition}
    )

    class Losing(Workflow):
        name = "claim"
        version = 2
        tracks = "claim"
        migrations = [migration.from_version(1, submitted=migration.stay, archived=migration.stay)]
        submitted = State(initial=True, slots=[_review("other")], then=[Route("archived")])
        archived = State(then=[Route("paid")])
        paid = State(terminal=True)

    assert Losing.definition is not None
    assert _codes(migration_checks.cross_problems(Losing.definition, {1: shape})) == [
        "MIGRATION_SLOTS",
        "MIGRATION_SLOTS",
    ]
