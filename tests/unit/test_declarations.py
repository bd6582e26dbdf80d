"""The declaration helpers of the GraphQL layer: a keyed mutation is its use case plus one
decorator, a refusal type its docstring plus the classes it answers, and an ``of(row)``
converter names only what differs from the row."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, cast

import pytest
import strawberry

from taskflow.api.graphql import schema
from taskflow.api.graphql.common import keyed, listing, relay
from taskflow.api.graphql.common.context import Context, Info
from taskflow.api.graphql.runs import types as run_types
from taskflow.core.access.principals import Principal


@strawberry.input(description="What to echo.")
class EchoInput:
    text: str = strawberry.field(description="The text.")
    idempotency_key: str | None = relay.idempotency_key_field()


@strawberry.type(description="The echo.")
class Echoed:
    text: str = strawberry.field(description="The text again.")


EchoPayload = Annotated[
    Echoed | relay.Common, strawberry.union("EchoPayload", description="Result of echoText.")
]


async def _echoed(info: Info, _: Principal, answer: keyed.Answer, __: bool) -> Echoed:
    return Echoed(text=answer["text"])


def test_a_keyed_mutation_is_named_after_its_method_and_described_by_its_docstring() -> None:
    @strawberry.type
    class Mutation:
        @keyed.mutation(EchoPayload, _echoed, argument="What to say.")
        async def echo_text(self, info: Info, me: Principal, input: EchoInput) -> keyed.Answer:
            """Say the text back: it is
            what was sent."""
            return {"text": input.text}

    @strawberry.type
    class Query:
        ok: bool = True

    printed = str(strawberry.Schema(query=Query, mutation=Mutation))
    assert '"""Say the text back: it is what was sent."""\n  echoText(' in printed
    assert '"""What to say."""\n    input: EchoInput!\n  ): EchoPayload!' in printed


def test_a_keyed_mutation_without_a_docstring_is_refused_when_declared() -> None:
    with pytest.raises(TypeError, match="echoText needs a docstring"):

        @keyed.mutation(EchoPayload, _echoed)
        async def echo_text(
            self: object, info: Info, me: Principal, input: EchoInput
        ) -> keyed.Answer:
            return {"text": input.text}


def test_every_mutation_of_the_schema_is_described() -> None:
    mutation = schema.build_schema()._schema.mutation_type
    assert mutation is not None
    for name, field in mutation.fields.items():
        assert field.description, name
        assert field.args["input"].description, name


@strawberry.type(description="A thing.")
class Thing:
    name: str = strawberry.field(description="Its name.")
    size: int = strawberry.field(description="Its size.")
    label: str = strawberry.field(description="Its label.")

    @strawberry.field(description="Computed, never copied.")
    def shout(self) -> str:
        return self.name.upper()


@dataclass
class ThingRow:
    name: str
    size: int
    title: str


def test_copied_reads_same_named_attributes_and_takes_the_rest_as_given() -> None:
    thing = relay.copied(Thing, ThingRow("a", 3, "The A"), label="The A!")
    assert (thing.name, thing.size, thing.label, thing.shout()) == ("a", 3, "The A!", "A")


def test_copied_fails_loudly_on_a_field_the_row_lacks() -> None:
    with pytest.raises(AttributeError, match="label"):
        relay.copied(Thing, ThingRow("a", 3, "The A"))


def test_copied_reads_a_mapping_by_key() -> None:
    thing = relay.copied(Thing, {"name": "b", "size": 4, "extra": 1}, label="B")
    assert (thing.name, thing.size, thing.label) == ("b", 4, "B")
    with pytest.raises(KeyError, match="size"):
        relay.copied(Thing, {"name": "b"}, label="B")


@dataclass(frozen=True)
class ThingChange:
    name: str | None = None
    size: int | None = None


def test_copied_makes_a_plain_dataclass_from_an_input() -> None:
    assert relay.copied(ThingChange, ThingRow("c", 5, "C")) == ThingChange(name="c", size=5)


@strawberry.type(name="Gadget", description="A node.")
class GadgetType(relay.Node):
    name: str = strawberry.field(description="Its name.")


@dataclass
class GadgetRow:
    id: int
    name: str


def test_copied_gives_a_node_its_global_id_under_its_graphql_name() -> None:
    gadget = relay.copied(GadgetType, GadgetRow(7, "g"))
    assert gadget.id == relay.node_id("Gadget", 7)
    assert relay.copied(GadgetType, GadgetRow(7, "g"), id="given").id == "given"


@strawberry.input(description="Which things.")
class ThingFilter:
    prefix: str = strawberry.field(default="", description="Only names starting so.")


def _things_schema() -> tuple[strawberry.Schema, list[tuple[str, listing.Page]]]:
    seen: list[tuple[str, listing.Page]] = []
    rows = [ThingRow(n, i, n.upper()) for i, n in enumerate(["ab", "ac", "b"])]

    @strawberry.type
    class Query:
        @listing.connection(ThingFilter, "Which things (default: all).", first=2)
        async def things(
            self, info: Info, me: Principal, page: listing.Page, filter: ThingFilter
        ) -> relay.Connection[Thing]:
            """The things, by name: the
            whole list."""
            seen.append((me.id, page))
            found = [r for r in rows if r.name.startswith(filter.prefix)]
            return relay.connection(
                found[: page.first + 1],
                lambda r: relay.copied(Thing, r, label=r.title),
                lambda r: r.name,
                total=len(found),
                limit=page.first,
            )

    return strawberry.Schema(query=Query), seen


def test_a_list_query_is_declared_by_its_use_case_and_its_filter() -> None:
    printed = str(_things_schema()[0])
    assert '"""The things, by name: the whole list."""\n  things(' in printed
    assert '"""Page size, at most 100."""\n    first: Int! = 2' in printed
    assert '"""endCursor of the previous page."""\n    after: String = null' in printed
    assert '"""Which things (default: all)."""\n    filter: ThingFilter = null' in printed
    assert "): ThingConnection!" in printed


async def _run(query: str) -> tuple[Any, list[tuple[str, listing.Page]]]:
    built, seen = _things_schema()
    context = Context(
        services=cast(Any, None),
        request_id="r",
        principal=Principal(id="amy", display_name="Amy"),
        run_loader=run_types.run_loader,
    )
    return await built.execute(query, context_value=context), seen


@pytest.mark.anyio
async def test_a_list_query_gets_the_caller_the_page_and_its_filter_defaults() -> None:
    result, seen = await _run("{ things { totalCount edges { node { name } } } }")
    assert result.errors is None
    assert result.data == {
        "things": {"totalCount": 3, "edges": [{"node": {"name": "ab"}}, {"node": {"name": "ac"}}]}
    }
    assert seen == [("amy", listing.Page(2, None))]
    result, seen = await _run(
        '{ things(first: 5, after: "ab", filter: {prefix: "a"}) { totalCount } }'
    )
    assert result.data == {"things": {"totalCount": 2}}
    assert seen == [("amy", listing.Page(5, "ab"))]


@pytest.mark.anyio
async def test_a_list_query_refuses_a_page_size_out_of_range() -> None:
    result, seen = await _run("{ things(first: 101) { totalCount } }")
    assert result.errors
    assert "first must be between 1 and 100; got 101." in result.errors[0].message
    assert seen == []
