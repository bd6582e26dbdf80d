"""The plain-field executor answers exactly what graphql-core's own would: the same data in
the same order, and the same errors (message, path, place) for every value a plain field
may not return: a null where the type forbids one, a value its type refuses, a read that
raises."""

from __future__ import annotations

import asyncio
import enum
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import pytest
import strawberry
from strawberry.scalars import JSON

from taskflow.api.graphql.common import plain_fields


@strawberry.enum
class Colour(enum.Enum):
    RED = "red"
    BLUE = "blue"


class Named:
    """Not a str: String serializes it by its ``__str__``."""

    def __str__(self) -> str:
        return "named"


class Later:
    """An awaitable attribute (awaited again on each await): graphql-core awaits it."""

    def __init__(self, value: Any) -> None:
        self.value = value

    def __await__(self) -> Any:
        if False:
            yield
        return self.value


class Exploding:
    @property
    def id(self) -> str:
        raise RuntimeError("cannot read the id")


@strawberry.type
class Part:
    label: str
    weight: int | None


@strawberry.type
class Owner:
    name: str

    @strawberry.field
    async def since(self) -> int:
        await asyncio.sleep(0)
        if self.name == "late":
            raise RuntimeError("no date for late")
        return 2020


@strawberry.type
class Thing:
    id: strawberry.ID
    name: str
    nickname: str | None
    count: int
    big: int | None
    colour: Colour
    when: datetime | None
    data: JSON
    part: Part | None
    owner: Owner
    parts: list[Part]
    maybe_parts: list[Part | None] | None
    owners: list[Owner]
    flags: list[bool]

    @strawberry.field
    def shout(self) -> str:
        return str(self.name).upper()

    @strawberry.field
    async def later(self) -> int:
        await asyncio.sleep(0)
        return self.count + 1


@dataclass
class Row:
    """The attributes Thing's plain fields read, any of them possibly wrong."""

    id: Any = "t1"
    name: Any = "one"
    nickname: Any = None
    count: Any = 1
    big: Any = None
    colour: Any = Colour.RED
    when: Any = None
    data: Any = field(default_factory=dict)
    part: Any = None
    owner: Any = field(default_factory=lambda: Owner(name="o"))
    parts: Any = field(
        default_factory=lambda: [Part(label="a", weight=1), Part(label="b", weight=None)]
    )
    maybe_parts: Any = None
    owners: Any = field(default_factory=lambda: [Owner(name="x"), Owner(name="y")])
    flags: Any = ()


ROWS: list[Any] = [
    Row(
        nickname="uno",
        big=7,
        when=datetime(2026, 12, 2, 4, 0, tzinfo=UTC),
        data={"a": [1, 2]},
        part=Part(label="p", weight=3),
        flags=[True, False],
    ),
    Row(name=Named(), nickname=12, count=True, colour=Colour.BLUE),
    Row(name=None),  # a null where the type forbids one
    Row(colour="purple"),  # a value the enum refuses
    Row(big=2**40),  # an Int out of range, on a nullable field
    Row(count="many"),  # an Int refusing a word, on a non-null field
    Row(id=5, part=Part(label=None, weight=None)),  # type: ignore[arg-type]
    Row(nickname=ValueError("an exception as a value")),
    Row(when="not a datetime"),
    Row(owner=None),  # a null object where the type forbids one
    Row(owner=Owner(name=None)),  # type: ignore[arg-type]  # a null inside it
    Row(owner=Owner(name="late")),  # an error below an awaited field
    Row(owner=Part(label="not an owner", weight=1)),  # an object of another type
    Row(data=Later({"later": True}), part=Later(Part(label="later", weight=None))),
    Row(parts=[Part(label="a", weight=1), None]),  # a null item the list forbids
    Row(
        parts=(Part(label="t", weight=1),), maybe_parts=[None, Part(label="m", weight=2)]
    ),  # a tuple; a nullable item
    Row(parts=[Part(label="a", weight=1), Part(label=None, weight=2)]),  # type: ignore[arg-type]  # an error in an item
    Row(maybe_parts=[Part(label=None, weight=1)], owners=[Owner(name="x"), Owner(name="late")]),  # type: ignore[arg-type]
    Row(parts=[Owner(name="not a part")], owners=[]),  # an object of another type
]


@strawberry.type
class Query:
    @strawberry.field
    def things(self) -> list[Thing | None]:
        return [*ROWS, Exploding()]

    @strawberry.field
    def thing(self) -> Thing:
        return ROWS[2]  # type: ignore[no-any-return]


QUERIES = [
    """{ things { id name nickname count big colour when data flags shout later
                 part { label weight } owner { name } } }""",
    "{ things { id owner { since name } part { weight } } }",
    "{ things { owner { o: name, ...on Owner { name } } } }",
    """{ things { name parts { label weight } maybeParts { label } owners { name since }
                 other: owners { name } } }""",
    "{ things { parts @include(if: true) { label } owners { since } } }",
    """{ things { n: name, name, c: count, ...F, __typename, colour @skip(if: true),
                 big @include(if: false) } }
       fragment F on Thing { nickname name when }""",
    "{ things { later id } }",
    "{ thing { name } }",
    "{ thing { id nickname } }",
]


def stock() -> strawberry.Schema:
    return strawberry.Schema(query=Query)


def fast() -> strawberry.Schema:
    schema = strawberry.Schema(query=Query)
    schema.execution_context_class = plain_fields.executor_for(schema._schema)
    return schema


def answer(schema: strawberry.Schema, query: str) -> tuple[Any, list[Any]]:
    result = asyncio.run(schema.execute(query))
    found = [(e.message, e.path, e.locations) for e in result.errors or []]
    return result.data, found


@pytest.mark.parametrize("query", QUERIES)
def test_the_plain_field_executor_answers_as_graphql_core_does(query: str) -> None:
    expected = answer(stock(), query)
    got = answer(fast(), query)
    assert got == expected
    # The same order of keys, not only the same keys.
    assert repr(got[0]) == repr(expected[0])


def test_the_cases_are_really_exercised() -> None:
    data, found = answer(fast(), QUERIES[0])
    assert data is not None
    assert data["things"][0]["name"] == "one"
    assert data["things"][1]["name"] == "named"
    assert data["things"][1]["nickname"] == "12"
    assert data["things"][2] is None  # its non-null name was null: the item is nulled
    assert data["things"][4]["big"] is None  # out of range on a nullable field: null
    messages = {tuple(path): message for message, path, _ in found}
    assert (
        messages[("things", 2, "name")] == "Cannot return null for non-nullable field Thing.name."
    )
    assert messages[("things", 3, "colour")] == "Enum 'Colour' cannot represent value: 'purple'"
    assert messages[("things", 4, "big")].startswith("Int cannot represent non 32-bit")
    assert messages[("things", 7, "nickname")] == "an exception as a value"
    assert messages[("things", 19, "id")] == "cannot read the id"
    assert data["things"][13]["data"] == {"later": True}
    assert data["things"][13]["part"] == {"label": "later", "weight": None}
    assert messages[("things", 9, "owner")].endswith("non-nullable field Thing.owner.")
    assert messages[("things", 10, "owner", "name")].endswith("non-nullable field Owner.name.")
    assert messages[("things", 12, "owner", "name")] == "'Part' object has no attribute 'name'"
    data, found = answer(fast(), QUERIES[1])
    assert data is not None
    assert data["things"][0]["owner"] == {"since": 2020, "name": "o"}
    assert data["things"][11] is None
    assert ("no date for late", ["things", 11, "owner", "since"]) in [f[:2] for f in found]
    data, found = answer(fast(), QUERIES[3])
    assert data is not None
    things = data["things"]
    assert things[0]["parts"] == [{"label": "a", "weight": 1}, {"label": "b", "weight": None}]
    assert things[0]["owners"] == [{"name": "x", "since": 2020}, {"name": "y", "since": 2020}]
    assert things[14] is None  # a null item in [Part!]!: the list, then the thing, nulled
    assert things[15]["parts"] == [{"label": "t", "weight": 1}]
    assert things[15]["maybeParts"] == [None, {"label": "m"}]
    assert things[16] is None
    assert things[17] is None  # the late owner's error reaches the thing
    assert things[18] is None  # an Owner in [Part!]!: its label cannot be read
    messages = {tuple(path): message for message, path, _ in found}
    assert messages[("things", 14, "parts", 1)].endswith("non-nullable field Thing.parts.")
    assert messages[("things", 17, "owners", 1, "since")] == "no date for late"


def test_only_plain_leaf_fields_are_planned() -> None:
    plans = plain_fields.plans(stock()._schema)
    assert set(plans["Thing"]) == {
        "id",
        "name",
        "nickname",
        "count",
        "big",
        "colour",
        "when",
        "data",
        "part",
        "owner",
        "parts",
        "maybeParts",
        "owners",
    }  # not shout or later (resolvers), flags (a list of scalars)
    assert set(plans["Part"]) == {"label", "weight"}
    assert set(plans["Owner"]) == {"name"}
    assert "Query" not in plans
