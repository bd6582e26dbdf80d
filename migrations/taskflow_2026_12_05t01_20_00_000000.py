"""Holiday feeds' last outcome (docs/calendars.md, "ICS feeds over HTTPS"): ``calendar_feed``
has a row per feed file in the calendars folder, written by the worker after each ask, read
by needsAttention (``CALENDAR_FEED_FAILING`` while it fails). Global, as calendars are: the
same files serve every workspace. The statement is a frozen copy of
``store/clocks/calendar_feeds.py`` as of this migration."""

from piccolo.apps.migrations.auto.migration_manager import MigrationManager

from taskflow.store.common import migration_steps

ID = "2026-12-05T01:20:00:000000"
VERSION = "1.39.0"
DESCRIPTION = "holiday feeds' last outcome"

FORWARDS = (
    "CREATE TABLE calendar_feed ("
    " file text PRIMARY KEY,"
    " url text NOT NULL,"
    " calendars text[] NOT NULL DEFAULT '{}',"
    " checked_at timestamptz NOT NULL,"
    " failing_since timestamptz,"
    " last_error text)",
)
BACKWARDS = ("DROP TABLE IF EXISTS calendar_feed",)


async def forwards() -> MigrationManager:
    return migration_steps.run_sql(ID, DESCRIPTION, FORWARDS, BACKWARDS)
