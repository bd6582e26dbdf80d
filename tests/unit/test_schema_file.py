"""The committed SDL is the schema the code serves; every example operation is valid."""

from __future__ import annotations

from pathlib import Path

import pytest
from graphql import parse, validate

from taskflow.api.graphql import schema

ROOT = Path(__file__).resolve().parents[2]
OPERATIONS = sorted((ROOT / "graphql" / "operations").glob("*.graphql"))


def test_committed_schema_matches_the_code() -> None:
    committed = (ROOT / "graphql" / "schema.graphql").read_text()
    assert committed == schema.printed_schema(), (
        "graphql/schema.graphql is stale: run `taskflow export-schema` and commit it"
    )


def test_there_are_example_operations() -> None:
    assert len(OPERATIONS) >= 4


@pytest.mark.parametrize("path", OPERATIONS, ids=lambda p: p.name)
def test_example_operation_is_valid(path: Path) -> None:
    graphql_schema = schema.build_schema()._schema
    errors = validate(graphql_schema, parse(path.read_text()))
    assert errors == []


def test_every_field_type_and_argument_is_described() -> None:
    sdl_schema = schema.build_schema()._schema
    missing = []
    for name, gql_type in sdl_schema.type_map.items():
        if name.startswith("__") or name in {"String", "Int", "Float", "Boolean", "ID"}:
            continue
        if not gql_type.description:
            missing.append(name)
        for field_name, field in (getattr(gql_type, "fields", None) or {}).items():
            if not field.description:
                missing.append(f"{name}.{field_name}")
            for arg_name, arg in (getattr(field, "args", None) or {}).items():
                if not arg.description:
                    missing.append(f"{name}.{field_name}({arg_name})")
        for value_name, value in (getattr(gql_type, "values", None) or {}).items():
            if not value.description:
                missing.append(f"{name}.{value_name}")
    assert missing == []
