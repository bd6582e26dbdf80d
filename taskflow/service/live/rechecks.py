"""Open sockets' tokens and principals re-checked together, once per interval.

Every ``recheck_interval`` the process reads the principals of all its open sockets in
one query (``principals.authenticate_many``): a socket whose token was revoked or whose
principal was deactivated is told (its connection closes); a principal whose powers
changed has their subscriptions read whole again (``Hub.refresh``). One query per round,
however many sockets: 50 sockets re-checked one by one stalled the process's pool.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from taskflow import errors
from taskflow.core.access.principals import Principal
from taskflow.service.access import principals as principal_service
from taskflow.service.access import report_sessions
from taskflow.service.common.container import Services

log = logging.getLogger("taskflow.live")


@dataclass(eq=False)
class Watched:
    """One socket's token, and what to do when it fails or its principal changes."""

    token: str
    refused: Callable[[errors.AuthenticationError], None]
    principal: Principal
    #: A console socket's report session (its id), re-checked instead of a token.
    session: str | None = None


class Rechecks:
    """The process's re-check loop: runs while a socket is watched."""

    def __init__(self, services: Services, changed: Callable[[Principal], Awaitable[None]]) -> None:
        self.services = services
        self.changed = changed
        self.watched: set[Watched] = set()
        self._task: asyncio.Task[None] | None = None

    def watch(self, entry: Watched) -> None:
        self.watched.add(entry)
        if self._task is None or self._task.done():
            self._task = asyncio.create_task(self._run(), name="taskflow-live-rechecks")

    def unwatch(self, entry: Watched) -> None:
        self.watched.discard(entry)
        if not self.watched and self._task is not None:
            self._task.cancel()
            self._task = None

    async def _run(self) -> None:
        while self.watched:
            await asyncio.sleep(self.services.settings.live.recheck_interval)
            with contextlib.suppress(Exception):
                await self.round()

    async def round(self) -> None:
        """Re-check every watched socket now."""
        entries = list(self.watched)
        answers: dict[str, Principal | errors.AuthenticationError] = dict(
            await principal_service.authenticate_many(
                self.services, [e.token for e in entries if e.session is None]
            )
        )
        for entry in entries:
            if entry.session is not None:
                # A session ended (signed out, expired, signed out everywhere) or whose
                # principal was deactivated reads as None: the socket closes.
                found = await report_sessions.principal_of(self.services, entry.session)
                answers[entry.token] = found or errors.AuthenticationError(
                    "The console session ended: sign in again."
                )
        changed: dict[str, Principal] = {}
        for entry in entries:
            answer = answers[entry.token]
            if isinstance(answer, errors.AuthenticationError):
                entry.refused(answer)
                continue
            if answer != entry.principal:
                changed[answer.id] = answer
            entry.principal = answer
        for principal in changed.values():
            await self.changed(principal)
