"""Property: the one SQL predicate of a slot's candidate rule agrees with ``Audience.admits``.

Rules and key sets are generated (compiled from generated ``who`` expressions,
and raw residual rules with unknown terms and nesting), stored the way slots
store them (``store/runs.split_audience``: keys, deny keys, residual JSON) and
evaluated by the real PostgreSQL through ``candidacy.admits_sql``, for the
candidates' columns and the delegates' alike.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import asyncpg
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from taskflow.core.definition import audience as au
from taskflow.store.runs import runs as run_rows
from taskflow.store.slots import candidacy
from tests.unit.definition.test_audience_properties import SUBJECT, audiences, principals

KEYS = ["any", "user:a", "user:b", "role:x", "role:y", "group:g", "attr:region=eu", "it's"]

leaf_rules = st.one_of(
    st.sampled_from(KEYS).map(lambda k: au.Rule("key", key=k)),
    st.just(au.Rule("unknown", key="subject.missing")),
)
rules = st.recursive(
    leaf_rules,
    lambda inner: st.one_of(
        inner.map(lambda r: au.Rule("not", args=(r,))),
        st.lists(inner, max_size=3).map(lambda a: au.Rule("all", args=tuple(a))),
        st.lists(inner, max_size=3).map(lambda a: au.Rule("any", args=tuple(a))),
    ),
    max_leaves=8,
)
raw_audiences = st.builds(
    au.Audience,
    keys=st.frozensets(st.sampled_from(KEYS), max_size=3),
    residual=st.lists(rules, max_size=3).map(tuple),
)
compiled_cases = st.tuples(
    audiences.map(lambda w: au.compile(w, SUBJECT)), principals.map(au.principal_keys)
)
raw_cases = st.tuples(raw_audiences, st.frozensets(st.sampled_from(KEYS)))
cases = st.lists(st.one_of(compiled_cases, raw_cases), min_size=1, max_size=60)

STATEMENT = f"""
    WITH c AS (
        SELECT (e->>'n')::int AS n,
               ARRAY(SELECT jsonb_array_elements_text(e->'audience')) AS audience,
               ARRAY(SELECT jsonb_array_elements_text(e->'deny')) AS deny,
               e->'residual' AS residual,
               ARRAY(SELECT jsonb_array_elements_text(e->'audience')) AS delegates,
               ARRAY(SELECT jsonb_array_elements_text(e->'deny')) AS delegates_deny,
               e->'residual' AS delegates_residual,
               ARRAY(SELECT jsonb_array_elements_text(e->'keys')) AS keys
        FROM jsonb_array_elements($1::text::jsonb) e
    )
    SELECT n, {candidacy.admits_sql("c", "c.keys")} AS candidate,
           {candidacy.admits_sql("c", "c.keys", column="delegates")} AS delegate
    FROM c ORDER BY n
"""


async def _evaluate(url: str, found: list[tuple[au.Audience, frozenset[str]]]) -> list[Any]:
    docs = []
    for n, (audience, keys) in enumerate(found):
        audience_keys, deny, residual = run_rows.split_audience(audience)
        docs.append(
            {"n": n, "audience": audience_keys, "deny": deny, "residual": residual,
             "keys": sorted(keys)}
        )  # fmt: skip
    conn = await asyncpg.connect(url)
    try:
        return list(await conn.fetch(STATEMENT, json.dumps(docs)))
    finally:
        await conn.close()


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(found=cases)
def test_the_sql_predicate_agrees_with_audience_admits(
    database_url: str, found: list[tuple[au.Audience, frozenset[str]]]
) -> None:
    rows = asyncio.run(_evaluate(database_url, found))
    assert len(rows) == len(found)
    for row, (audience, keys) in zip(rows, found, strict=True):
        expected = audience.admits(keys)
        assert row["candidate"] is expected, (str(audience), sorted(keys))
        assert row["delegate"] is expected, (str(audience), sorted(keys))
