"""The workspace a request acts in (docs/workspaces.md): none in particular until its caller
is authenticated, then the caller's."""

from __future__ import annotations

import contextlib

from taskflow import errors
from taskflow.core.access.principals import Principal
from taskflow.store.workspaces import scope as workspace_scope


def act_before_authentication() -> None:
    """A request starts in every workspace: its caller, once authenticated, narrows it to
    theirs; an anonymous request reaches only what its link's secret token names."""
    workspace_scope.scope_to(workspace_scope.EVERY)


def request_scope() -> contextlib.AbstractContextManager[None]:
    """A whole request, around everything the app does for it: it starts in every workspace
    and the workspace its caller narrows it to (:func:`act_as`) ends with it, so the task that
    served it (a test's, one serving several requests) is back where it was."""
    return workspace_scope.every()


def act_as(principal: Principal) -> None:
    """The current task acts in ``principal``'s workspace (a request already authenticated:
    a sibling field of its operation runs in a task of its own). A principal never stored
    (no workspace: one a test builds) leaves the task where it is."""
    if principal.workspace:
        workspace_scope.scope_to(principal.workspace)
        workspace_scope.RUNS_LIMITED.set(principal.workspace_runs_limited)
        workspace_scope.SLOTS_LIMITED.set(principal.workspace_slots_limited)


def refuse_suspended(principal: Principal) -> None:
    """A suspended workspace's tokens are refused, with the reason as a fact."""
    if principal.workspace_suspended:
        raise errors.AuthenticationError(
            f"The workspace of principal {principal.id!r} is suspended: its tokens are refused "
            "until an administrator resumes it.",
            reason="WORKSPACE_SUSPENDED",
            workspace=principal.workspace,
        )
