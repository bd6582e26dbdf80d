"""Calendars reloaded in running processes when their folder changes (a holiday feed's new
copy, an edited file): no restart (docs/calendars.md, "ICS feeds over HTTPS").

Every ``serve`` and ``worker`` process checks the folder's files (names, sizes, modification
times) every ``TASKFLOW_CALENDAR_RELOAD_SECONDS`` (default 30) and, when they changed, loads
the folder again and serves it in one swap (``Registry.adopt``: a request sees the old
calendars or the new, never half). A folder that no longer loads, or whose calendar names
changed (definitions were checked against the names at start), is logged and the calendars
in use are kept: restart to take it. What a reload means for running clocks is what a
restart after the same edit means: deadlines computed from now on read the new calendar;
instants already armed stand until their slot's clock is recomputed (docs/calendars.md).
"""

from __future__ import annotations

import asyncio
import logging
import os
from pathlib import Path

from taskflow import errors
from taskflow.service.clocks import calendar_files
from taskflow.service.common.container import Services

log = logging.getLogger("taskflow.calendars")

#: Seconds between two looks at the calendars folder.
EVERY = 30.0

Signature = tuple[tuple[str, int, int], ...]


def every() -> float:
    """``TASKFLOW_CALENDAR_RELOAD_SECONDS`` (default 30)."""
    raw = os.environ.get("TASKFLOW_CALENDAR_RELOAD_SECONDS")
    try:
        value = float(raw) if raw else EVERY
    except ValueError:
        raise errors.ConfigError(
            f"TASKFLOW_CALENDAR_RELOAD_SECONDS={raw!r} is not a number of seconds"
        ) from None
    if value <= 0:
        raise errors.ConfigError("TASKFLOW_CALENDAR_RELOAD_SECONDS must be above 0")
    return value


def signature(folder: str | Path) -> Signature:
    """What says the folder's calendars changed: each ``.toml`` and ``.ics`` file's name,
    size and modification time."""
    found: list[tuple[str, int, int]] = []
    for path in sorted(Path(folder).iterdir()) if Path(folder).is_dir() else []:
        if path.suffix in (".toml", ".ics"):
            try:
                stat = path.stat()
            except OSError:  # gone between the listing and the look
                continue
            found.append((path.name, stat.st_size, stat.st_mtime_ns))
    return tuple(found)


def reload(services: Services) -> bool:
    """Load the calendars folder again and serve it; False (the calendars in use kept, the
    reason logged) when it does not load or its calendar names changed."""
    folder = services.settings.calendars
    try:
        fresh = calendar_files.load_folder(folder)
    except errors.TaskflowError as exc:
        log.warning("the calendars in %s no longer load (%s); keeping those in use", folder, exc)
        return False
    if fresh.names() != services.calendars.names():
        log.warning(
            "the calendars in %s are now %s (were %s); keeping those in use: restart to "
            "load them (definitions are checked against calendar names at start)",
            folder,
            sorted(fresh.names()),
            sorted(services.calendars.names()),
        )
        return False
    services.calendars.adopt(fresh)
    log.info("calendars reloaded from %s", folder)
    return True


class Watch:
    """The folder's signature as last loaded, and the check that reloads on a change."""

    def __init__(self, services: Services) -> None:
        self.services = services
        self.seen = signature(services.settings.calendars)

    def check(self) -> bool:
        """Reload when the folder changed since the last look; True when it reloaded."""
        now = signature(self.services.settings.calendars)
        if now == self.seen:
            return False
        self.seen = now
        return reload(self.services)

    async def keep_current(self, seconds: float) -> None:
        """:meth:`check` every ``seconds`` until cancelled."""
        while True:
            await asyncio.sleep(seconds)
            try:
                self.check()
            except OSError as exc:
                log.warning("could not look at the calendars folder (%s)", exc)
