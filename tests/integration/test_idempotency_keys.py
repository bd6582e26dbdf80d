"""``service.idempotency``: the key is written with the effect, and an effect is never redone.

Use cases here are real functions writing real rows (a principal's display name), so
what is checked is what PostgreSQL holds.
"""

from __future__ import annotations

import asyncio

import pytest

from taskflow import errors
from taskflow.service.access import principals as principal_service
from taskflow.service.common import container, idempotency
from tests.lock_waits import until_waiting

pytestmark = pytest.mark.anyio


async def _rename(services: container.Services, name: str) -> dict[str, str]:
    async with services.db.transaction() as conn:
        await conn.execute("UPDATE principal SET display_name = $1 WHERE id = 'fiona'", name)
    return {"principal": "fiona"}


async def _names(services: container.Services) -> tuple[str, int]:
    async with services.db.connection() as conn:
        name = await conn.fetchval("SELECT display_name FROM principal WHERE id = 'fiona'")
        keys = await conn.fetchval("SELECT count(*) FROM idempotency_key")
    return str(name), int(keys)


async def test_an_effect_whose_answer_was_lost_is_not_done_again(
    services: container.Services, people: dict[str, str]
) -> None:
    calls = []

    async def crashing() -> dict[str, str]:
        calls.append(1)
        await _rename(services, f"Fiona {len(calls)}")
        raise RuntimeError("the process died after the commit")

    with pytest.raises(RuntimeError):
        await idempotency.once(
            services, actor="app", operation="rename", key="k", request={"n": 1}, work=crashing
        )
    # The effect committed with its key, though no answer was stored.
    assert await _names(services) == ("Fiona 1", 1)
    with pytest.raises(idempotency.IdempotencyKeyReused, match="changed things"):
        await idempotency.once(
            services, actor="app", operation="rename", key="k", request={"n": 1}, work=crashing
        )
    assert calls == [1]
    assert await _names(services) == ("Fiona 1", 1)


async def test_a_rolled_back_effect_leaves_no_key(
    services: container.Services, people: dict[str, str]
) -> None:
    async def refused() -> dict[str, str]:
        async with services.db.transaction() as conn:
            await conn.execute("UPDATE principal SET display_name = 'X' WHERE id = 'fiona'")
            raise errors.Forbidden("no")

    with pytest.raises(errors.Forbidden):
        await idempotency.once(
            services, actor="app", operation="rename", key="r", request={}, work=refused
        )
    # The refusal is stored as the answer; its effect is gone with its transaction.
    name, keys = await _names(services)
    assert name != "X"
    assert keys == 1
    with pytest.raises(errors.Forbidden, match="no"):
        await idempotency.once(
            services, actor="app", operation="rename", key="r", request={}, work=refused
        )


async def test_racing_duplicates_run_once(
    services: container.Services, people: dict[str, str]
) -> None:
    calls: list[int] = []

    async def slow() -> dict[str, str]:
        calls.append(1)
        await until_waiting(services.db.url)  # a duplicate waits for the key meanwhile
        return await _rename(services, f"Fiona {len(calls)}")

    answers = await asyncio.gather(
        *(
            idempotency.once(
                services, actor="app", operation="rename", key="race", request={}, work=slow
            )
            for _ in range(5)
        )
    )
    assert calls == [1]
    assert [answer for answer, _ in answers] == [{"principal": "fiona"}] * 5
    assert sorted(again for _, again in answers) == [False, True, True, True, True]
    assert await _names(services) == ("Fiona 1", 1)


async def test_keys_of_other_actors_and_operations_are_apart(
    services: container.Services, people: dict[str, str]
) -> None:
    for actor, operation in (("app", "a"), ("helpdesk", "a"), ("app", "b")):
        _, again = await idempotency.once(
            services,
            actor=actor,
            operation=operation,
            key="same",
            request={"who": actor},
            work=lambda: _rename(services, "F"),
        )
        assert again is False
    assert (await _names(services))[1] == 3
    assert (await principal_service.get(services, "fiona")) is not None
