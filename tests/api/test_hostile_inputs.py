"""Hostile values in every variable of every shipped operation (issue 16.4), over HTTP.

Hypothesis takes an operation from graphql/operations/, its working variables, and
replaces one of them (or a value inside one) with something hostile: NUL, lone
surrogates, huge strings, huge or negative numbers, malformed ids and cursors, JSON
of the wrong shape. The answer is never a 5xx and never INTERNAL, and a refused
mutation stores nothing.
"""

from __future__ import annotations

import base64
import json
import os
from collections.abc import AsyncIterator
from typing import Any

import asyncpg
import httpx
import pytest
from graphql import OperationDefinitionNode, OperationType, parse
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.api import operation_inputs as ops
from tests.conftest import GraphQLResult

pytestmark = pytest.mark.anyio

TABLES = (
    "run",
    "subject",
    "slot",
    "audit_event",
    "magic_link",
    "notification",
    "principal",
    "automation",
)


def _b64(text: str) -> str:
    return base64.urlsafe_b64encode(text.encode("utf-8", "surrogatepass")).decode().rstrip("=")


hostile_text = st.one_of(
    st.text(max_size=30),
    st.text(alphabet=st.sampled_from(["\x00", "\ud800", "\udfff", "a", "é", "\U0001f600"])),
    st.integers(1, 1_100_000).map(lambda n: "x" * n),
    st.sampled_from(["", " ", "null", "'; DROP TABLE run; --", "%00", "\\u0000"]),
)
malformed_ids = st.one_of(
    hostile_text,
    st.sampled_from(["Slot", "Run", "Notification", "MagicLink", "Principal", "Nope"]).flatmap(
        lambda kind: st.one_of(
            st.integers(-(2**70), 2**70).map(lambda n: _b64(f"{kind}:{n}")),
            st.text(max_size=50).map(lambda t: _b64(f"{kind}:{t}")),
        )
    ),
    st.lists(st.text(max_size=20), min_size=1, max_size=4).map(lambda p: _b64("\x1f".join(p))),
)
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**64), 2**64),
    st.floats(allow_nan=False),
    hostile_text,
    malformed_ids,
)
hostile = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=10), inner, max_size=4)
    ),
    max_leaves=12,
)


def paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [prefix] if prefix else []
    if isinstance(value, dict):
        for key, item in value.items():
            found += paths(item, (*prefix, key))
    return found


def replaced(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    copy = dict(value)
    copy[path[0]] = replaced(value.get(path[0], {}), path[1:], new)
    return copy


def is_mutation(name: str) -> bool:
    (operation,) = [
        d for d in parse(ops.text(name)).definitions if isinstance(d, OperationDefinitionNode)
    ]
    return operation.operation == OperationType.MUTATION


def declared(name: str) -> list[str]:
    (operation,) = [
        d for d in parse(ops.text(name)).definitions if isinstance(d, OperationDefinitionNode)
    ]
    return [v.variable.name.value for v in operation.variable_definitions or ()]


@pytest.fixture
async def world(
    client: httpx.AsyncClient, people: dict[str, str], database_url: str
) -> AsyncIterator[tuple[ops.Objects, asyncpg.Connection[Any]]]:
    objects = await ops.prepare(client, people)
    conn = await asyncpg.connect(database_url)
    try:
        yield objects, conn
    finally:
        await conn.close()


async def counts(conn: asyncpg.Connection[Any]) -> dict[str, int]:
    return {t: int(await conn.fetchval(f"SELECT count(*) FROM {t}")) for t in TABLES}


def refusal(result: GraphQLResult) -> str | None:
    """The refusal code of a mutation's answer (an error's code too); None on success."""
    if result.errors or not result.data:
        return "ERROR"
    for answer in result.data.values():
        if answer is None:
            return "ERROR"
        if isinstance(answer, dict) and "code" in answer:
            return str(answer["code"])
    return None


async def longest_line(conn: asyncpg.Connection[Any]) -> int:
    found = await conn.fetchval("SELECT max(length(details::text)) FROM audit_event")
    return int(found or 0)


Case = tuple[str, dict[str, Any]]


def cases(objects: ops.Objects, count: int) -> list[Case]:
    """``count`` (operation, variables) pairs drawn by hypothesis.

    Drawn up front and sent afterwards: the requests need the test's event loop, which
    hypothesis' own runner of async tests does not keep across a failing example.
    """
    drawn: list[Case] = []

    @settings(
        max_examples=count,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(data=st.data())
    def draw(data: st.DataObject) -> None:
        name = data.draw(st.sampled_from(ops.names()), label="operation")
        variables = ops.variables(name, objects)
        targets = paths(variables) + [(v,) for v in declared(name) if v not in variables]
        if targets:
            path = data.draw(st.sampled_from(targets), label="path")
            variables = replaced(variables, path, data.draw(hostile, label="value"))
        drawn.append((name, variables))

    draw()
    return drawn


async def test_no_hostile_value_gets_a_5xx_or_internal_or_stores_anything(
    client: httpx.AsyncClient,
    people: dict[str, str],
    world: tuple[ops.Objects, asyncpg.Connection[Any]],
) -> None:
    objects, conn = world
    failures = []
    for name, variables in cases(objects, int(os.environ.get("TASKFLOW_HOSTILE_EXAMPLES", "150"))):
        mutation = is_mutation(name)
        before = await counts(conn) if mutation else {}
        token = people[ops.RUNNER.get(name, "fiona")]
        response = await client.post(
            "/graphql",
            # ensure_ascii (the default): lone surrogates travel as \ud800 escapes, as from JS.
            content=json.dumps({"query": ops.text(name), "variables": variables}),
            headers={"content-type": "application/json", "authorization": f"Bearer {token}"},
        )
        shown = (name, json.dumps(variables)[:300])
        if response.status_code >= 500:
            failures.append((*shown, response.status_code, response.text[:300]))
            continue
        result = GraphQLResult(response)
        if "INTERNAL" in result.error_codes:
            failures.append((*shown, "INTERNAL"))
        elif mutation and (code := refusal(result)) is not None:
            after = await counts(conn)
            if code in ("INVALID_INPUT", "ERROR"):
                changed = after != before
            else:
                # A domain refusal is a timeline line (who tried what), nothing else,
                # and never a line over the caps.
                changed = {**after, "audit_event": 0} != {**before, "audit_event": 0}
                changed = changed or await longest_line(conn) > 20_000
            if changed:
                failures.append((*shown, "stored", str(result.body)[:300]))
    assert not failures, "\n".join(map(str, failures))
