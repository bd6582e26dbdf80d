"""The worker's ask of every holiday feed, and what it leaves behind: each feed's outcome
recorded (``calendar_feed``: needsAttention's ``CALENDAR_FEED_FAILING`` while one fails),
and the calendars reloaded at once when a copy changed (docs/calendars.md)."""

from __future__ import annotations

import logging
from datetime import datetime
from pathlib import Path

from taskflow.core.delivery import redact
from taskflow.service.clocks import calendar_files, calendar_reload, ics_feeds
from taskflow.service.common.container import Services
from taskflow.store.clocks import calendar_feeds

log = logging.getLogger("taskflow.calendars")


async def ask_every_feed(services: Services, now: datetime) -> tuple[int, int]:
    """Ask every feed of the calendars folder again (conditional GETs), record each outcome,
    reload the calendars when a copy changed; (feeds answered, feeds failed)."""
    folder = Path(services.settings.calendars)
    done, failed = await ics_feeds.refresh(
        ics_feeds.Net.of(services), folder, ics_feeds.FeedSettings.from_env(), now
    )
    async with services.db.connection() as conn:
        for fetched in done:
            name = fetched.file.name
            readers = calendar_files.readers_of(folder, name)
            url = redact.redacted_url(fetched.url)
            await calendar_feeds.succeeded(conn, name, url, readers, now)
        for problem in failed:
            log.warning("%s", problem.message)
            readers = calendar_files.readers_of(folder, problem.file)
            await calendar_feeds.failed(
                conn, problem.file, problem.url, readers, now, problem.message
            )
    if any(fetched.changed for fetched in done):
        calendar_reload.reload(services)
    return len(done), len(failed)
