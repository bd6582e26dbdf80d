"""Shaping GraphQL errors: codes for what we raise on purpose, masks for the rest.

Domain refusals are payload types, not errors (GRAPHQL.md). What reaches the
top-level ``errors`` list is authentication (``UNAUTHENTICATED``), requests the
schema refuses (validation, limits), a few query-level refusals (``FORBIDDEN``,
``INVALID_INPUT``) carrying their ``code``, and the unexpected (any exception not a
``TaskflowError``, and every ``errors.InternalError`` such as the engine's): masked to
a message with a request id and logged with its stack trace.
"""

from __future__ import annotations

import logging
import re
from typing import Any

from graphql.error import GraphQLError
from strawberry.extensions import MaskErrors

from taskflow import errors
from taskflow.api import limits
from taskflow.service.common import outage

#: HTTP status of a GraphQL answer carrying an UNAVAILABLE error (as for pages).
UNAVAILABLE_STATUS = 503

log = logging.getLogger("taskflow.api")


#: A value graphql-core quotes in a message: after a space or colon, up to the quote that
#: ends it (followed by punctuation, a space or the end).
_QUOTED = re.compile(
    r"""(?<=[\s:(])(['"])([^'"]{N})(?s:.){4,}?\1(?=[;,.)\s]|$)""".replace(
        "N", str(limits.PREFIX_CHARS)
    )
)
#: The longest message a client gets (graphql-core quotes whole values when it refuses them).
MAX_MESSAGE = 500


def _with(
    error: GraphQLError,
    message: str,
    extensions: dict[str, Any] | None,
    original: Exception | None = None,
) -> GraphQLError:
    """``error`` at the same place with another message, extensions and original error."""
    at = error.path
    return GraphQLError(
        message, error.nodes, error.source, error.positions, at, original, extensions
    )


def _shortened(error: GraphQLError) -> GraphQLError:
    """``error`` with every quoted value cut to a short prefix, and a capped length."""
    message = _QUOTED.sub(lambda m: f"{m[1]}{m[2]}...{m[1]}", error.message)
    if len(message) > MAX_MESSAGE:
        message = message[:MAX_MESSAGE] + " (cut)"
    if message == error.message:
        return error
    return _with(error, message, error.extensions, error.original_error)


class ShapeErrors(MaskErrors):
    """Adds ``extensions.code`` to taskflow errors and masks every other exception."""

    def __init__(self) -> None:
        super().__init__(should_mask_error=self._is_unexpected)

    @staticmethod
    def _is_unexpected(error: GraphQLError) -> bool:
        original = error.original_error
        if isinstance(original, errors.InternalError):  # a fault of ours, e.g. the engine's
            return True
        return original is not None and not isinstance(
            original, errors.TaskflowError | GraphQLError
        )

    def _request_id(self) -> str:
        context = self.execution_context.context
        return str(getattr(context, "request_id", "unknown"))

    def anonymise_error(self, error: GraphQLError) -> GraphQLError:
        request_id = self._request_id()
        if outage.is_unavailable(error.original_error):
            return self._unavailable(error, request_id)
        log.error(
            "unexpected error in GraphQL request %s at %s",
            request_id,
            error.path,
            exc_info=error.original_error,
        )
        message = f"Unexpected error. It has been logged with request id {request_id}."
        return _with(error, message, {"code": "INTERNAL", "requestId": request_id})

    def _unavailable(self, error: GraphQLError, request_id: str) -> GraphQLError:
        log.warning(
            "GraphQL request %s: database unavailable (%s)",
            request_id,
            type(error.original_error).__name__,
        )
        response = getattr(self.execution_context.context, "response", None)
        if response is not None:
            response.status_code = UNAVAILABLE_STATUS
            response.headers["Retry-After"] = str(outage.RETRY_AFTER_SECONDS)
        retry = outage.RETRY_AFTER_SECONDS
        extensions = {"code": "UNAVAILABLE", "retryAfterSeconds": retry, "requestId": request_id}
        original = error.original_error
        # The database's outage says so; another backend's (files) says its own.
        said = original.message if isinstance(original, errors.TaskflowError) else outage.MESSAGE
        return _with(error, said, extensions)

    def _process_result(self, result: object) -> None:
        # MaskErrors asks isinstance(result, <a runtime-checkable Protocol>), which inspects
        # the protocol's attributes on every request; the question is just this one.
        found = getattr(result, "errors", None)
        if found:
            result.errors = self._process_errors(found)  # type: ignore[attr-defined]

    def _process_errors(self, found: list[GraphQLError]) -> list[GraphQLError]:
        shaped = []
        for error in super()._process_errors(found):
            if len(error.message) > limits.PREFIX_CHARS + 80:
                error = _shortened(error)
            original = error.original_error
            if isinstance(original, errors.TaskflowError):
                extensions = dict(error.extensions or {})
                extensions["code"] = original.code
                if original.facts:
                    extensions["facts"] = original.facts
                error = _with(error, original.message, extensions, original)
            shaped.append(error)
        return shaped
