"""The per-attempt timeouts of a runner's actions (``step_guard.Watchdog``): as
``asyncio.timeout`` per action, with one timer for them all."""

from __future__ import annotations

import asyncio

import pytest

from taskflow.service.steps.step_guard import Watchdog

pytestmark = pytest.mark.anyio


async def _quick() -> str:
    await asyncio.sleep(0)
    return "done"


async def test_an_action_past_its_limit_ends_with_a_timeout_and_the_next_ones_run() -> None:
    watchdog = Watchdog()
    loop = asyncio.get_running_loop()
    started = loop.time()
    with pytest.raises(TimeoutError):
        async with watchdog.within(0.05):
            await asyncio.sleep(5)
    assert loop.time() - started < 2
    for _ in range(100):  # the following attempts, each within its own limit
        async with watchdog.within(300):
            assert await _quick() == "done"
    # A shorter limit after longer ones is kept to.
    with pytest.raises(TimeoutError):
        async with watchdog.within(0.05):
            await asyncio.sleep(5)
    assert loop.time() - started < 4
    watchdog.close()


async def test_a_finished_attempt_is_not_cut_when_its_deadline_passes_later() -> None:
    watchdog = Watchdog()
    async with watchdog.within(0.02):
        assert await _quick() == "done"
    await asyncio.sleep(0.1)  # the timer set for that attempt fires between attempts
    async with watchdog.within(0.02):  # a fresh limit: not the old deadline
        await asyncio.sleep(0.01)
    watchdog.close()


async def test_a_limit_set_for_an_earlier_attempt_moves_to_the_one_under_way() -> None:
    watchdog = Watchdog()
    async with watchdog.within(0.05):
        pass
    await asyncio.sleep(0.03)
    # The timer is due at 0.05 (the first attempt's); this attempt may run until ~0.33.
    async with watchdog.within(0.3):
        await asyncio.sleep(0.1)
    watchdog.close()


async def test_a_cancellation_from_elsewhere_stays_a_cancellation() -> None:
    watchdog = Watchdog()
    entered = asyncio.Event()

    async def attempt() -> None:
        async with watchdog.within(300):
            entered.set()
            await asyncio.sleep(5)

    task = asyncio.get_running_loop().create_task(attempt())
    await entered.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    watchdog.close()
