"""Candidates and delegates: the compiled form of each kind of rule, and who matches.

Each test shows an expression, the audience keys it compiles to (what the
inbox query matches with ``&&``) and the residual rules left to check.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from taskflow.core.definition import audience as au
from taskflow.core.definition.audience import Audience, Rule, who
from taskflow.core.definition.conditions.expr import item, subject

SUBJECT = {"submitted_by": "bob", "manager_id": "maria", "region": "eu", "team": "billing"}


def compiled(
    w: au.Who, subject_: dict[str, Any] = SUBJECT, item_: Any = None
) -> tuple[list[str], list[str]]:
    aud = au.compile(w, subject_, item_)
    return sorted(aud.keys), [str(r) for r in aud.residual]


@dataclass
class Principal:
    id: str
    roles: tuple[str, ...] = ()
    groups: tuple[str, ...] = ()
    attributes: dict[str, Any] = field(default_factory=dict)
    email: str | None = None


def test_user_by_literal_id() -> None:
    assert compiled(who.id("alice")) == (["user:alice"], [])


def test_user_by_subject_field() -> None:
    assert compiled(who.id(subject.manager_id)) == (["user:maria"], [])


def test_role() -> None:
    assert compiled(who.role("finance")) == (["role:finance"], [])


def test_group_from_subject() -> None:
    assert compiled(who.group(subject.team)) == (["group:billing"], [])


def test_attribute_rule_same_region_as_subject() -> None:
    assert compiled(who.attr("region") == subject.region) == (["attr:region=eu"], [])


def test_attribute_rule_with_several_values() -> None:
    assert compiled(who.attr("level").is_in([3, 4])) == (["attr:level=3", "attr:level=4"], [])


def test_email_of_an_outsider() -> None:
    assert compiled(who.email(subject.contact), {"contact": "v@x.example"}) == (
        ["email:v@x.example"],
        [],
    )


def test_union_is_all_keys_and_no_residual() -> None:
    assert compiled(who.role("finance") | who.group("emea")) == (
        ["group:emea", "role:finance"],
        [],
    )


def test_exclusion_becomes_a_not_rule() -> None:
    # Separation of duties: finance, but never the submitter.
    assert compiled(who.role("finance") - who.id(subject.submitted_by)) == (
        ["role:finance"],
        ["not user:bob"],
    )


def test_intersection_keeps_the_narrowest_key_and_checks_the_other() -> None:
    assert compiled(who.role("manager") & (who.attr("region") == subject.region)) == (
        ["attr:region=eu"],
        ["role:manager"],
    )


def test_union_of_user_and_intersection() -> None:
    w = who.id(subject.manager_id) | (who.role("manager") & (who.attr("region") == subject.region))
    keys, residual = compiled(w)
    assert keys == ["attr:region=eu", "user:maria"]
    assert residual == ["(user:maria or (role:manager and attr:region=eu))"]


def test_everyone_except() -> None:
    assert compiled(who.anyone() - who.id("bob")) == (["any"], ["not user:bob"])


def test_foreach_item_in_candidates() -> None:
    assert compiled(who.group(item.team), SUBJECT, {"team": "legal"}) == (["group:legal"], [])


def test_missing_subject_field_grants_no_one() -> None:
    aud = au.compile(who.id(subject.manager_id) | who.role("finance"), {})
    assert sorted(aud.keys) == ["role:finance"]
    assert au.matches(aud, Principal("maria", roles=("manager",))) is False


def test_unresolvable_exclusion_shuts_the_audience() -> None:
    # "Not the submitter" with no submitter known must not let the submitter in.
    aud = au.compile(who.role("finance") - who.id(subject.submitted_by), {})
    assert [str(r) for r in aud.residual] == ["not unknown(subject.submitted_by is missing)"]
    assert au.matches(aud, Principal("fred", roles=("finance",))) is False


def test_holder_and_candidates_in_reminders() -> None:
    w = who.holder() | who.candidates()
    aud = au.compile(w, SUBJECT, holder="carol", candidates=who.role("finance"))
    assert sorted(aud.keys) == ["role:finance", "user:carol"]
    nobody_holds = au.compile(w, SUBJECT, candidates=who.role("finance"))
    assert sorted(nobody_holds.keys) == ["role:finance"]


def test_principal_keys() -> None:
    p = Principal(
        "alice",
        roles=("finance",),
        groups=("emea",),
        attributes={"region": "eu", "reports": ["bob", "carl"], "senior": True},
        email="alice@corp.example",
    )
    assert au.principal_keys(p) == {
        "any",
        "user:alice",
        "role:finance",
        "group:emea",
        "attr:region=eu",
        "attr:reports=bob",
        "attr:reports=carl",
        "attr:senior=true",
        "email:alice@corp.example",
    }
    assert au.principal_keys({"id": "x"}) == {"any", "user:x"}


def test_matches_with_separation_of_duties() -> None:
    candidates = who.role("finance") - who.id(subject.submitted_by)
    assert au.matches(candidates, Principal("alice", roles=("finance",)), SUBJECT)
    assert not au.matches(candidates, Principal("bob", roles=("finance",)), SUBJECT)
    assert not au.matches(candidates, Principal("carol", roles=("sales",)), SUBJECT)


def test_rules_round_trip_through_json() -> None:
    aud = au.compile(
        who.id("m") | ((who.role("manager") & who.group("emea")) - who.id("bob")), SUBJECT
    )
    again = [Rule.from_json(r) for r in aud.to_json()["residual"]]
    assert [str(r) for r in again] == [str(r) for r in aud.residual]
    assert aud.to_json()["keys"] == sorted(aud.keys)


def test_describe() -> None:
    w = who.role("finance") - who.id(subject.submitted_by)
    assert str(w) == "role:finance and not user:{subject.submitted_by}"
    assert str(au.compile(w, SUBJECT)) == "any of role:finance, and not user:bob"
    assert str(Audience(frozenset())) == "nobody"
