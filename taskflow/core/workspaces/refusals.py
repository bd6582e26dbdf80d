"""The typed refusals of workspaces (docs/workspaces.md): a limit reached, a status unchanged."""

from __future__ import annotations

from typing import Any

from taskflow.core.common.refusals import Fact, Refusal, RefusalCode


class WorkspaceLimitReached(Refusal, code=RefusalCode.WORKSPACE_LIMIT_REACHED):
    """The workspace is at one of its limits (docs/workspaces.md, "Limits"); nothing changed.
    End runs or close slots first, wait a minute (requests), or ask an admin of the default
    workspace to raise the limit."""

    #: ``runs``, ``open_slots`` or ``requests_per_minute``.
    limit = Fact(str)
    allowed = Fact(int)
    current = Fact(int)

    def __init__(
        self, message: str | None = None, *, limit: str, allowed: int, current: int, **context: Any
    ) -> None:
        super().__init__(message, limit=limit, allowed=allowed, current=current, **context)

    @classmethod
    def explain(cls, facts: dict[str, Any]) -> str:
        return (
            f"The workspace is at its limit of {facts.get('allowed')} "
            f"{str(facts.get('limit')).replace('_', ' ')} (now {facts.get('current')}); "
            "nothing was changed. End some first, or ask an admin of the default workspace to "
            "raise the limit."
        )


class WorkspaceUnchanged(Refusal, code=RefusalCode.WORKSPACE_UNCHANGED):
    """The workspace is in that status already (suspended, or active); nothing changed."""

    status = Fact(str)

    def __init__(self, message: str | None = None, *, status: str, **context: Any) -> None:
        super().__init__(message, status=status, **context)
