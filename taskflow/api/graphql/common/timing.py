"""Each GraphQL request's latency by operation name and outcome (``/metrics``), and
the operation name and outcome (``ok``, ``refused:CODE``, ``error:CODE``) on its access line.

Outcomes: ``unauthenticated`` (no valid token), ``error`` (any other top-level
error: refused by the schema or its limits, or unexpected), ``refused`` (a
mutation answered a typed refusal), ``ok``. A typed refusal marks the request
through :data:`REFUSED` when it is built (``relay.Refusal``).
"""

from __future__ import annotations

import contextvars
import time
from typing import Any

from graphql import GraphQLError
from strawberry.types import ExecutionContext

from taskflow import errors
from taskflow.api import access_log
from taskflow.service.reports import metrics

#: The current request's flags: set to a fresh list per request; a refusal appends to it.
REFUSED: contextvars.ContextVar[list[str] | None] = contextvars.ContextVar(
    "taskflow_graphql_refused", default=None
)


def note_refusal(code: str) -> None:
    """Count a typed refusal, and mark the request it answers as refused."""
    metrics.refused(code)
    marks = REFUSED.get()
    if marks is not None:
        marks.append(code)


def _code(error: GraphQLError) -> str:
    """A top-level error's code (``INVALID`` for a document the schema refuses uncoded)."""
    code = (error.extensions or {}).get("code")
    if code:
        return str(code)
    if isinstance(error.original_error, errors.TaskflowError):
        return error.original_error.code
    return "INVALID" if error.original_error is None else "INTERNAL"


def begin() -> tuple[float, list[str]]:
    """Start timing the current request: (its start, the list its refusals are noted in).
    Called by the schema's one extension (``guards.Gate``) as the operation begins."""
    marks: list[str] = []
    REFUSED.set(marks)
    return time.perf_counter(), marks


def end(context: ExecutionContext, started: float, marks: list[str]) -> None:
    """Observe ``taskflow_graphql_request_duration_seconds`` once for the request, note its
    operation and outcome on the access line, and sample the pool gauges now and then."""
    REFUSED.set(None)
    outcome = "refused" if marks else "ok"
    result = context.result
    found = list(result.errors or []) if result is not None else []
    found += list(context.pre_execution_errors or [])
    detail = f"refused:{marks[0]}" if marks else "ok"
    if found:
        outcome = "error"
        detail = f"error:{_code(found[0])}"
        for error in found:
            code = (error.extensions or {}).get("code")
            if code == "UNAUTHENTICATED" or isinstance(
                error.original_error, errors.AuthenticationError
            ):
                outcome = "unauthenticated"
                detail = "error:UNAUTHENTICATED"
    _observed(
        context.operation_name, outcome, detail, started, getattr(context.context, "services", None)
    )


def finish(operation_name: str | None, marks: list[str], started: float, services: Any) -> None:
    """:func:`end` for a request answered without an execution context and without any
    error (``claim_fast``): ``ok``, or ``refused`` when a refusal was noted."""
    REFUSED.set(None)
    detail = f"refused:{marks[0]}" if marks else "ok"
    _observed(operation_name, "refused" if marks else "ok", detail, started, services)


def _observed(
    operation_name: str | None, outcome: str, detail: str, started: float, services: Any
) -> None:
    metrics.graphql_request(operation_name, outcome, time.perf_counter() - started)
    access_log.note_graphql(operation_name, detail)
    if services is not None:
        metrics.sample_pools_now_and_then(services)
