"""The one exception root of taskflow.

Every error carries a machine ``code`` (stable, SCREAMING_SNAKE_CASE, what the
API exposes) and a ``message`` that says what went wrong *and what to do*.
Layers define their own children of :class:`TaskflowError` next to the code
that raises them; the API maps codes to GraphQL errors or typed refusals.
"""

from __future__ import annotations

from typing import Any


class TaskflowError(Exception):
    """Root of every error taskflow raises on purpose."""

    code: str = "TASKFLOW_ERROR"

    def __init__(self, message: str, *, code: str | None = None, **facts: Any) -> None:
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code
        #: Facts a client needs to act on the error (e.g. the holder of a claimed slot).
        self.facts: dict[str, Any] = facts

    def __str__(self) -> str:
        return self.message


class ConfigError(TaskflowError):
    """The environment or a configuration file is wrong; the message names the setting."""

    code = "CONFIG_ERROR"


class ValidationError(TaskflowError):
    """Input that cannot be accepted; nothing was changed."""

    code = "INVALID_INPUT"


class NotFound(TaskflowError):
    """The thing does not exist, or the caller may not see it (the two answer alike)."""

    code = "NOT_FOUND"


class AuthenticationError(TaskflowError):
    """No valid credentials: missing, expired, tampered, signed by a retired key, or inactive."""

    code = "UNAUTHENTICATED"


class Forbidden(TaskflowError):
    """The caller is known but lacks the role or candidacy the action needs."""

    code = "FORBIDDEN"


class Busy(TaskflowError):
    """Others kept changing the same rows at the same moment; nothing was changed. Retryable:
    the same request again (after ``retry_after_seconds``) has the one effect it asked for."""

    code = "BUSY"


class InternalError(TaskflowError):
    """A fault of ours, never the caller's (a workflow definition that leads the engine
    nowhere, a broken invariant): the API never answers it as a refusal but masks it as an
    internal error with the request id, and logs it."""

    code = "INTERNAL"
