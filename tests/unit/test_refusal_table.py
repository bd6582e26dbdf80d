"""Refusals: one code enum, every refusal class mapped to a GraphQL type, every refusal
member of a payload union reachable from the table, and untyped codes still mapped right."""

from __future__ import annotations

import functools
from datetime import UTC, datetime
from typing import Any

import pytest
from graphql import GraphQLEnumType, GraphQLObjectType, GraphQLUnionType

from taskflow import errors
from taskflow.api.graphql import schema
from taskflow.api.graphql.common import refusals as api
from taskflow.core.common import refusals as core
from taskflow.core.runs.decision import EngineError


def _all_refusal_classes() -> list[type[core.Refusal]]:
    found: list[type[core.Refusal]] = []
    todo: list[type[core.Refusal]] = [core.Refusal]
    while todo:
        for sub in todo.pop().__subclasses__():
            found.append(sub)
            todo.append(sub)
    # The bases that only share a fact declare no code of their own.
    return [cls for cls in found if cls.code != core.Refusal.code]


def _sample(cls: type[errors.TaskflowError]) -> errors.TaskflowError:
    """An instance of ``cls`` with every fact absent (as a replayed refusal may come back)."""
    error = cls.__new__(cls)
    errors.TaskflowError.__init__(error, "Refused; do something else.", problems=[])
    return error


def _built_names() -> dict[type[errors.TaskflowError], str]:
    return {cls: type(build(_sample(cls))).__name__ for cls, build in api.TABLE.items()}


@functools.cache
def _graphql_schema() -> Any:
    return schema.build_schema()._schema


def test_every_refusal_class_has_its_own_graphql_mapping() -> None:
    for cls in _all_refusal_classes():
        if cls.code in core.PAGE_ONLY:
            continue
        nearest = next(c for c in cls.__mro__ if c in api.TABLE)
        assert nearest is not errors.TaskflowError, f"{cls.__name__} has no entry in TABLE"
        built = api.refusal_for(_sample(cls))
        assert built.code == cls.code, cls


def test_every_refusal_member_of_a_payload_union_is_reachable_from_the_table() -> None:
    built = set(_built_names().values())
    refusal = _graphql_schema().get_type("Refusal")
    members = {
        member.name
        for t in _graphql_schema().type_map.values()
        if isinstance(t, GraphQLUnionType)
        for member in t.types
        if isinstance(member, GraphQLObjectType) and refusal in member.interfaces
    }
    assert members, "no refusal member found in any union"
    assert members - built == set(), "payload union members no table entry builds"


def test_the_graphql_enum_is_the_core_enum_minus_page_only_codes() -> None:
    enum = _graphql_schema().get_type("RefusalCode")
    assert isinstance(enum, GraphQLEnumType)
    assert list(enum.values) == [c.name for c in core.RefusalCode if c not in core.PAGE_ONLY]
    assert all(v.description for v in enum.values.values())
    for cls in (errors.ValidationError, errors.NotFound, errors.Forbidden, errors.Busy):
        assert cls.code in set(core.RefusalCode), cls


def test_a_refusal_builds_its_own_message_and_keeps_a_given_one() -> None:
    assert core.NothingToClaim().message.startswith("No open slot you may take matches")
    assert "guard says no" in core.MoveNotAllowed(reasons=["guard says no"]).message
    given = core.NotHolder("Only 'ann' may do this.", holder="ann")
    assert (given.message, given.holder, given.code) == (
        "Only 'ann' may do this.",
        "ann",
        "NOT_HOLDER",
    )


def test_an_untyped_code_maps_to_its_typed_member_with_typed_facts() -> None:
    # Code not converted yet (or a refusal replayed from an idempotency key, facts as JSON).
    at = datetime(2026, 12, 1, 9, 30, tzinfo=UTC)
    old = errors.TaskflowError(
        "Already claimed.", code="ALREADY_CLAIMED", holder="ann", claimed_at=at.isoformat()
    )
    member = api.refusal_for(old)
    assert type(member).__name__ == "AlreadyClaimed"
    assert (member.holder, member.claimed_at) == ("ann", at)
    fresh = api.refusal_for(core.AlreadyClaimed(holder="bob", claimed_at=at))
    assert fresh.claimed_at == at
    assert fresh.message
    unknown = api.refusal_for(errors.TaskflowError("Bad.", code="SOMETHING_NEW", field="x"))
    assert (type(unknown).__name__, unknown.field) == ("InvalidInput", "x")


def test_internal_errors_are_never_refusals() -> None:
    with pytest.raises(EngineError):
        api.refusal_for(EngineError("workflow 'w': the enter hook of state 's' failed."))
    with pytest.raises(errors.AuthenticationError):
        api.refusal_for(errors.AuthenticationError("Sign in again."))
