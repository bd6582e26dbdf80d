"""Retrying a use case that lost a race inside PostgreSQL, then answering BUSY.

Every writer takes its locks in one order (docs/architecture.md, "Lock order"),
so deadlocks should not happen; where PostgreSQL still reports one (40P01), or a
serialization failure (40001), the transaction was rolled back whole and nothing
was written. Running the use case again with the same input then has the same
single effect. After :data:`ATTEMPTS` losses in a row the caller gets
:class:`taskflow.errors.Busy`, a typed refusal that says when to try again.
Use cases (:func:`retried`) and the worker's batch (:func:`run`) share this.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import random
from collections.abc import Awaitable, Callable
from typing import Concatenate, ParamSpec, TypeVar

import asyncpg

from taskflow import errors
from taskflow.service.common.container import Services

T = TypeVar("T")
P = ParamSpec("P")

log = logging.getLogger("taskflow.retry")

#: How many times a use case runs before it answers BUSY.
ATTEMPTS = 5
#: The pause before the n-th retry is up to BACKOFF * 2**n seconds (jittered).
BACKOFF = 0.01
#: What a BUSY answer suggests waiting before the same request again.
RETRY_AFTER_SECONDS = 1

#: PostgreSQL's word that the transaction lost a race and was rolled back.
LOST_RACE = (asyncpg.DeadlockDetectedError, asyncpg.SerializationError)


def busy(action: str) -> errors.Busy:
    return errors.Busy(
        f"Others changed the same data at the same moment {ATTEMPTS} times while you tried to "
        f"{action}; nothing was changed. Send the same request again in "
        f"{RETRY_AFTER_SECONDS} second.",
        retry_after_seconds=RETRY_AFTER_SECONDS,
    )


async def run(services: Services | None, action: str, work: Callable[[], Awaitable[T]]) -> T:
    """``work()``, run again while PostgreSQL reports a deadlock or serialization failure;
    :class:`taskflow.errors.Busy` after :data:`ATTEMPTS` tries.

    Inside an enclosing transaction (``services.db.in_transaction``) a lost race aborts
    that transaction: ``work`` runs once and whoever owns the transaction retries it.
    """
    if services is not None and services.db.in_transaction:
        return await work()
    for attempt in range(ATTEMPTS):
        try:
            return await work()
        except LOST_RACE as exc:
            log.info("%s lost a race (%s), attempt %d", action, exc.sqlstate, attempt + 1)
            await asyncio.sleep(random.uniform(0, BACKOFF * 2**attempt))
    raise busy(action)


def retried(
    action: str,
) -> Callable[
    [Callable[Concatenate[Services, P], Awaitable[T]]],
    Callable[Concatenate[Services, P], Awaitable[T]],
]:
    """Decorate a use case ``f(services, ...)`` so that it runs through :func:`run`."""

    def wrap(
        f: Callable[Concatenate[Services, P], Awaitable[T]],
    ) -> Callable[Concatenate[Services, P], Awaitable[T]]:
        async def use_case(services: Services, /, *args: P.args, **kwargs: P.kwargs) -> T:
            return await run(services, action, lambda: f(services, *args, **kwargs))

        functools.update_wrapper(use_case, f)
        return use_case

    return wrap
