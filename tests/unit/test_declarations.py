"""The declaration helpers of the GraphQL layer: a keyed mutation is its use case plus one
decorator, a refusal type its docstring plus the classes it answers, and an ``of(row)``
converter names only what differs from the row."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

import pytest
import strawberry

from taskflow.api.graphql import keyed, relay, schema
from taskflow.api.graphql.context import Info
from taskflow.core.principals import Principal


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
