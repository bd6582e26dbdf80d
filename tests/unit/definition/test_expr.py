"""Conditions: building, three-valued evaluation, reading, JSON."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from taskflow.core.definition.conditions import expr as ex
from taskflow.core.definition.conditions import expr_data as exd
from taskflow.core.definition.conditions.expr import Env, item, payload, principal, subject


def env(**subject_fields: object) -> Env:
    return Env(subject=subject_fields)


def test_comparison_true_false_and_unknown_when_missing() -> None:
    cond = subject.amount > 1000
    assert ex.evaluate(cond, env(amount=1500)) is True
    assert ex.evaluate(cond, env(amount=10)) is False
    assert ex.evaluate(cond, env()) is None
    assert ex.evaluate(cond, env(amount=None)) is None  # null is unknown too, as in SQL
    assert ex.matches(cond, env()) is False  # unknown does not match


def test_incomparable_values_are_unknown_not_a_crash() -> None:
    assert ex.evaluate(subject.amount > 5, env(amount="many")) is None


@pytest.mark.parametrize(
    ("a", "b", "and_", "or_"),
    [
        (True, True, True, True),
        (True, False, False, True),
        (True, None, None, True),
        (False, None, False, None),
        (None, None, None, None),
        (False, False, False, False),
    ],
)
def test_kleene_logic(a: bool | None, b: bool | None, and_: bool | None, or_: bool | None) -> None:
    values = {"a": a, "b": b}
    fields = {k: v for k, v in values.items() if v is not None}
    left, right = subject.a == True, subject.b == True  # noqa: E712 - builds a comparison
    assert ex.evaluate(left & right, env(**fields)) is and_
    assert ex.evaluate(left | right, env(**fields)) is or_
    assert ex.evaluate(~left, env(**fields)) is (None if a is None else not a)


def test_payload_principal_and_item_paths() -> None:
    e = Env(
        subject={"region": "eu"},
        payload={"review": {"decision": "approve"}},
        principal={"id": "alice", "attributes": {"region": "eu"}},
        item={"kind": "insurance"},
    )
    assert ex.matches(payload.review.decision == "approve", e)
    assert ex.matches(principal.attributes.region == subject.region, e)
    assert ex.matches(item.kind == "insurance", e)
    assert ex.evaluate(payload.other.decision == "x", e) is None


def test_principal_may_be_an_object() -> None:
    class P:
        id = "alice"

    assert ex.matches(principal.id == "alice", Env(principal=P()))


def test_membership_is_set_and_missing() -> None:
    assert ex.matches(subject.country.is_in(["DE", "FR"]), env(country="DE"))
    assert ex.evaluate(subject.country.is_in(["DE"]), env()) is None
    assert ex.matches(subject.tags.contains("vip"), env(tags=["vip", "new"]))
    assert ex.evaluate(subject.x.is_set(), env()) is False  # never unknown
    assert ex.evaluate(subject.x.is_missing(), env(x=None)) is True


def test_arithmetic_and_unknown_operands() -> None:
    cond = subject.amount * 1.2 > 100
    assert ex.matches(cond, env(amount=90))
    assert ex.evaluate(cond, env(amount="x")) is None
    assert ex.evaluate(subject.a / subject.b > 1, env(a=1, b=0)) is None


def test_bare_value_as_condition() -> None:
    assert ex.evaluate(subject.flag, env(flag=True)) is True
    assert ex.evaluate(subject.flag, env(flag=False)) is False
    assert ex.evaluate(subject.flag, env()) is None
    assert ex.evaluate(None, env()) is True  # no condition at all always holds


def test_python_boolean_operators_are_refused_with_the_fix() -> None:
    with pytest.raises(TypeError, match=r"combine conditions with & \| ~"):
        _ = (subject.a == 1) and (subject.b == 2)


def test_describe_reads_like_the_rule() -> None:
    cond = (subject.amount > 1000) & ((payload.review.decision == "reject") | subject.flagged)
    assert ex.describe(cond) == (
        'subject.amount > 1000 and (payload.review.decision == "reject" or subject.flagged)'
    )
    assert str(subject.x.is_missing()) == "subject.x is missing"
    assert str(~(subject.a == 1)) == "not subject.a == 1"


def test_paths_lists_what_is_read() -> None:
    cond = (subject.priority == "P1") | (payload.triage.priority == subject.level)
    assert exd.paths(cond, "subject") == {"subject.priority", "subject.level"}
    assert exd.paths(cond) == {"subject.priority", "subject.level", "payload.triage.priority"}


def test_item_access_escape_hatch_for_clashing_names() -> None:
    assert subject["is_set"].dotted == "subject.is_set"


values = st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=5))


@given(a=values, b=values)
def test_json_round_trip_evaluates_alike(a: object, b: object) -> None:
    cond = ((subject.a == b) | ~(subject.b.is_in([1, "x"]))) & (subject.a + 1 > 2) | (
        subject.c.is_set()
    )
    again = exd.from_json(exd.to_json(cond))
    e = env(a=a, b=b)
    assert ex.evaluate(again, e) is ex.evaluate(cond, e)
    assert ex.describe(again) == ex.describe(cond)


def test_literals_must_be_json_values() -> None:
    with pytest.raises(TypeError, match="ISO strings"):
        _ = subject.when > object()
