"""Every mutation of the committed schema takes an ``idempotencyKey`` and can answer the two
refusals every mutation may give: ``IdempotencyKeyReused`` and ``Busy``.

A mutation added without them fails here (the keyed path is ``api/graphql/common/keyed.py``, the
retry ``service/common/retry.py``).
"""

from __future__ import annotations

from pathlib import Path

from graphql import GraphQLInputObjectType, GraphQLNonNull, GraphQLUnionType, build_schema

SCHEMA = Path(__file__).resolve().parents[2] / "graphql" / "schema.graphql"


def test_every_mutation_takes_a_key_and_answers_busy_and_a_reused_key() -> None:
    schema = build_schema(SCHEMA.read_text(encoding="utf-8"))
    assert schema.mutation_type is not None
    missing: list[str] = []
    for name, field in schema.mutation_type.fields.items():
        argument = field.args.get("input")
        input_type = argument.type if argument is not None else None
        if isinstance(input_type, GraphQLNonNull):
            input_type = input_type.of_type
        if not isinstance(input_type, GraphQLInputObjectType):
            missing.append(f"{name}: no single input argument")
            continue
        if "idempotencyKey" not in input_type.fields:
            missing.append(f"{name}: its input has no idempotencyKey")
        payload = field.type.of_type if isinstance(field.type, GraphQLNonNull) else field.type
        if not isinstance(payload, GraphQLUnionType):
            missing.append(f"{name}: its payload is not a union")
            continue
        members = {t.name for t in payload.types}
        for refusal in ("IdempotencyKeyReused", "Busy"):
            if refusal not in members:
                missing.append(f"{name}: its payload cannot answer {refusal}")
    assert len(schema.mutation_type.fields) > 20
    assert missing == []
