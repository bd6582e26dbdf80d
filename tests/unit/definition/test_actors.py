"""Who acted, as definitions read it (``ctx.actor``, the ``actor`` condition root)."""

from __future__ import annotations

from taskflow import Route, Slot, State, actor, principal, subject, who
from taskflow.core.definition import actors, define
from taskflow.core.definition.checks import validate
from taskflow.core.definition.conditions import expr as ex


def test_each_kind_of_actor_and_what_the_timeline_records() -> None:
    cases = {
        "alice": ("principal", "alice", "alice"),
        "system": ("system", None, None),
        "timer": ("timer", None, None),
        "email:ana@example.com": ("link", None, "email:ana@example.com"),
        "automation:42": ("automation", None, None),
    }
    for name, (kind, login, recorded) in cases.items():
        found = actors.of(name)
        assert (found.kind, found.login, found.recorded) == (kind, login, recorded), name
    assert actors.of(None) == actors.SYSTEM_ACTOR
    assert actors.automation(42).name == "automation:42"


def test_a_principals_roles_come_from_its_keys_or_its_record() -> None:
    keyed = actors.with_keys("sam", {"user:sam", "role:finance", "role:employee", "group:x"})
    assert keyed.roles == ("employee", "finance")
    assert actors.principal({"id": "fiona", "roles": ["finance"]}).roles == ("finance",)


def test_conditions_read_the_actor_three_valued() -> None:
    four_eyes = actor.login != subject.requested_by
    env = ex.Env(subject={"requested_by": "sam"}, actor=actors.of("fiona").as_value())
    assert ex.evaluate(four_eyes, env) is True
    assert (
        ex.evaluate(
            four_eyes, ex.Env(subject={"requested_by": "sam"}, actor=actors.of("sam").as_value())
        )
        is False
    )
    # taskflow itself has no login: unknown, so the route does not match
    system = ex.Env(subject={"requested_by": "sam"}, actor=actors.SYSTEM_ACTOR.as_value())
    assert ex.evaluate(four_eyes, system) is None
    in_finance = ex.lift("finance").is_in(actor.roles)
    assert ex.matches(in_finance, env) is False  # fiona, read from a bare name: no roles
    finance = actors.with_keys("fiona", {"role:finance"}).as_value()
    assert ex.matches(in_finance, ex.Env(actor=finance)) is True


def test_routes_may_read_the_actor_but_not_the_principal() -> None:
    def with_route(when: ex.Expr) -> list[str]:
        definition = define(
            "w",
            tracks="t",
            states={
                "a": State(
                    initial=True,
                    slots=[Slot("s", candidates=who.anyone())],
                    then=[Route("b", when=when), Route("b")],
                ),
                "b": State(terminal=True),
            },
        )
        return [p.code for p in validate.problems(definition)]

    assert with_route(actor.login != subject.requested_by) == []
    assert with_route(principal.id != subject.requested_by) == ["BAD_REFERENCE"]
