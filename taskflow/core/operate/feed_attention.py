"""A holiday feed that keeps failing (``CALENDAR_FEED_FAILING``, admins only: calendars are
the deployment's): the needs-attention item that says which calendars read it, where it is
fetched from (no query, no userinfo), the last error and since when. Pure; the worker records
each feed's outcome (``store/clocks/calendar_feeds.py``), docs/calendars.md says what to do."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from taskflow.core.operate.attention import Item, Reason


@dataclass(frozen=True)
class FeedStatus:
    """A failing feed as last recorded: its file in the calendars folder, its URL as shown,
    the calendars that read the file, since when it fails and its last error."""

    file: str
    url: str
    calendars: tuple[str, ...]
    failing_since: datetime
    last_error: str


def attention_item(status: FeedStatus) -> Item:
    """The item of one failing feed (its ``ref``: ``feed:<file>``)."""
    readers = ", ".join(status.calendars) or "no calendar yet"
    return Item(
        reason=Reason.CALENDAR_FEED_FAILING,
        since=status.failing_since,
        ref=f"feed:{status.file}",
        run_id=None,
        workflow=None,
        state=None,
        detail=f"{status.file} (read by {readers}) fails to refresh: {status.last_error}",
    )
