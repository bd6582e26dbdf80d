"""Idempotency keys for every mutation: a retry with the same key gets the first answer.

A key belongs to its caller and the operation (``claim``, ``complete``...): other
callers never see or collide with it. The first request with a key runs the use
case; its answer (ids of what it returned, or its refusal) is stored under the
key, the key itself written in the transaction of the effect, so a request that
changed something and lost its answer is settled by sending it again. The same
key with another input is refused (``IDEMPOTENCY_KEY_REUSED``). Concurrent
requests with one key wait for each other: one effect, the same answer.

Refusals that say "try again" (retryable or outage codes) are not stored: the
retry runs anew. Keys are kept ``RETENTION`` (7 days), then pruned by the worker
(``prune``) or dropped when met again.
"""

from __future__ import annotations

import hashlib
import importlib
import json
from collections.abc import Awaitable, Callable, Mapping
from datetime import timedelta
from typing import Any

from taskflow import errors
from taskflow.core.common import refusals
from taskflow.service.common.container import Services
from taskflow.store.common import db
from taskflow.store.common import idempotency as keys

#: How long a key answers again.
RETENTION = timedelta(days=7)
#: The longest key accepted (the column's length).
MAX_KEY_LENGTH = 200
#: Refusal codes that invite a retry: never stored, the retry runs again.
NOT_STORED = frozenset(
    {"BUSY", "CONFLICT", "RETRYABLE", "RETRY", "UNAVAILABLE", "DEADLOCK", "SERIALIZATION_FAILURE"}
)

Answer = dict[str, Any]


IdempotencyKeyReused = refusals.IdempotencyKeyReused


def fingerprint(request: Mapping[str, Any]) -> str:
    """SHA-256 of the input, canonical JSON (key order and spacing do not matter)."""
    text = json.dumps(request, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _check_key(key: str) -> None:
    if not key or len(key) > MAX_KEY_LENGTH or "\x00" in key or not key.isprintable():
        raise errors.ValidationError(
            f"idempotencyKey must be 1-{MAX_KEY_LENGTH} printable characters (e.g. a UUID).",
            field="idempotencyKey",
        )


def _refusal_answer(error: errors.TaskflowError) -> Answer:
    cls = type(error)
    return {
        "refused": {
            "class": f"{cls.__module__}:{cls.__qualname__}",
            "code": error.code,
            "message": error.message,
            "facts": json.loads(json.dumps(error.facts, default=str)),
        }
    }


def _refusal_of(stored: Mapping[str, Any]) -> errors.TaskflowError:
    """The refusal as first raised: same class, code, message and facts."""
    cls: type[errors.TaskflowError] = errors.TaskflowError
    module, _, name = str(stored.get("class", "")).partition(":")
    found: Any = None
    if module.startswith("taskflow."):
        try:
            found = importlib.import_module(module)
        except ImportError:
            found = None  # stored before its module moved (issue 30): found by name below
        for part in name.split("."):
            found = getattr(found, part, None)
    if not (isinstance(found, type) and issubclass(found, errors.TaskflowError)):
        found = _by_qualname(name)
    if found is not None:
        cls = found
    error = cls.__new__(cls)
    Exception.__init__(error, stored["message"])
    error.message = stored["message"]
    error.code = stored["code"]
    error.facts = dict(stored.get("facts") or {})
    return error


def _by_qualname(name: str) -> type[errors.TaskflowError] | None:
    """The one refusal class called ``name`` (a class whose module moved keeps its name)."""
    seen: list[type[errors.TaskflowError]] = []
    todo = [errors.TaskflowError]
    while todo:
        cls = todo.pop()
        todo += cls.__subclasses__()
        if cls.__qualname__ == name and cls not in seen:
            seen.append(cls)
    return seen[0] if len(seen) == 1 else None


async def once(
    services: Services,
    *,
    actor: str,
    operation: str,
    key: str | None,
    request: Mapping[str, Any],
    work: Callable[[], Awaitable[Answer]],
) -> tuple[Answer, bool]:
    """Run ``work`` once per (actor, operation, key); (its answer, whether it was replayed).

    ``work`` returns a JSON-able answer (the ids the payload is built from) or raises a
    refusal; a replay returns the stored answer or raises the stored refusal again.
    """
    if key is None:
        return await work(), False
    _check_key(key)
    scope = keys.Scope(actor, operation, key, fingerprint(request))
    refused: errors.TaskflowError | None = None
    async with services.db.keyed() as lock_conn:
        await keys.lock(lock_conn, scope)
        stored = await keys.find(lock_conn, scope)
        now = services.clock.now()
        if stored is not None and stored.created_at < now - RETENTION:
            await keys.forget(lock_conn, scope)
            stored = None
        if stored is not None:
            return _replay(scope, stored), True

        async def mark(conn: db.Connection) -> None:
            await keys.mark_effect(conn, scope, services.clock.now())

        token = db.BEFORE_COMMIT.set(mark)
        try:
            answer = await work()
        except errors.TaskflowError as refusal:
            refused = refusal
        finally:
            db.BEFORE_COMMIT.reset(token)
        if refused is None:
            await keys.record(lock_conn, scope, {"ok": answer}, now)
        elif refused.code not in NOT_STORED and not refused.facts.get("retryable"):
            await keys.record(lock_conn, scope, _refusal_answer(refused), now)
    # Raised after the key's transaction committed: the refusal is the stored answer.
    if refused is not None:
        raise refused
    return answer, False


def _replay(scope: keys.Scope, stored: keys.Stored) -> Answer:
    if stored.fingerprint != scope.fingerprint:
        raise IdempotencyKeyReused(
            f"You used the idempotencyKey {scope.key[:40]!r} for another {scope.operation} "
            "with a different input; use a new key for a new request (the same key only "
            "repeats the same request).",
            field="idempotencyKey",
        )
    if stored.answer is None:
        raise IdempotencyKeyReused(
            f"The first {scope.operation} with this idempotencyKey changed things but its "
            "answer was not kept; read the object to see where it stands, and use a new key "
            "for a new request.",
            field="idempotencyKey",
        )
    if "refused" in stored.answer:
        raise _refusal_of(stored.answer["refused"])
    answer: Answer = stored.answer["ok"]
    return answer


async def prune(services: Services, limit: int = 1000) -> int:
    """Delete keys older than RETENTION (the worker calls it now and then)."""
    async with services.db.transaction() as conn:
        return await keys.prune(conn, services.clock.now() - RETENTION, limit)
