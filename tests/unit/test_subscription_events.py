"""Each event of a subscription runs on the selection its first event collected
(taskflow/api/graphql/common/plain_fields.py): the answers are the same, and the
executor's memos stay one entry however many events pass (they grew by one an event)."""

from __future__ import annotations

import gc
from collections.abc import AsyncGenerator

import pytest
import strawberry

from taskflow.api.graphql.common import plain_fields


@strawberry.type
class Inner:
    a: int
    b: str


@strawberry.type
class Query:
    x: int = 1


@strawberry.type
class Subscription:
    @strawberry.subscription
    async def ticks(self, n: int) -> AsyncGenerator[Inner, None]:
        for i in range(n):
            yield Inner(a=i, b=f"tick {i}")


@pytest.mark.anyio
async def test_a_long_subscription_keeps_one_memo_entry_and_answers_each_event() -> None:
    plain = strawberry.Schema(query=Query, subscription=Subscription)
    schema = strawberry.Schema(
        query=Query,
        subscription=Subscription,
        execution_context_class=plain_fields.executor_for(plain._schema),
    )
    stream = await schema.subscribe("subscription { ticks(n: 50) { a b } }")
    answers = [result.data async for result in stream]  # type: ignore[union-attr]
    assert answers == [{"ticks": {"a": i, "b": f"tick {i}"}} for i in range(50)]
    executors = [
        o
        for o in gc.get_objects()
        if isinstance(o, plain_fields.Executor) and o.schema is schema._schema
    ]
    assert executors
    assert all(len(e._relevant_sub_fields) <= 1 for e in executors)
    assert all(len(e._steps) <= 1 for e in executors)
