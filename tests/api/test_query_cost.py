"""The static query cost limit (issue 15.7): refused up front, the shipped operations pass."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from graphql import parse

from taskflow.api import limits
from taskflow.api.graphql import schema
from taskflow.api.graphql.common import cost, relay
from tests.api import workflows as w
from tests.conftest import gql

OPERATIONS = Path(__file__).resolve().parents[2] / "graphql" / "operations"

ROW = (
    "edges { node { id run { id timeline(first: 100) { edges { node { kind at actor } } } "
    "slots { id name } moves { name allowed } checklist { name } "
    "leadTime { total { __typename } } } } }"
)
#: Issue 15.7: this took 5.6 s and 1.16 MB on the 18-slot demo data.
ATTACK = "{ " + " ".join(f"w{i}: work(first: 100) {{ {ROW} }}" for i in range(30)) + " }"


@pytest.mark.anyio
async def test_thirty_aliases_of_deep_work_pages_are_refused_up_front(
    client: httpx.AsyncClient, people: dict[str, str]
) -> None:
    await w.start(client, people["app"], "expense-approval", "expense", "EXP-1", w.EXPENSE)
    result = await gql(client, ATTACK, token=people["leah"])
    assert result.data is None
    (error,) = result.errors
    assert error["extensions"]["code"] == "QUERY_TOO_COSTLY"
    found, limit = error["extensions"]["cost"], error["extensions"]["limit"]
    assert limit == limits.Limits().max_query_cost
    assert found > limit
    assert f"cost is {found}" in error["message"]
    assert f"limit of {limit}" in error["message"]
    one = "{ work(first: 100) { " + ROW + " } }"
    assert (await gql(client, one, token=people["leah"])).ok()["work"]["edges"]


@pytest.mark.parametrize("path", sorted(OPERATIONS.glob("*.graphql")), ids=lambda p: p.stem)
def test_every_shipped_operation_is_under_the_limit_with_the_largest_pages(path: Path) -> None:
    document = parse(path.read_text())
    found = cost.of_operation(
        schema.build_schema()._schema, document, None, {"first": relay.MAX_FIRST}
    )
    assert 0 < found <= limits.Limits().max_query_cost


def test_first_multiplies_through_nested_connections() -> None:
    built = schema.build_schema()._schema
    small = cost.of_operation(built, parse("{ work(first: 1) { " + ROW + " } }"), None, {})
    large = cost.of_operation(built, parse("{ work(first: 10) { " + ROW + " } }"), None, {})
    by_variable = cost.of_operation(
        built,
        parse("query($n: Int!) { work(first: $n) { " + ROW + " } }"),
        None,
        {"n": 10},
    )
    assert large == by_variable
    assert large > 9 * small
