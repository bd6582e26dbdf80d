"""Piccolo table class of workspaces (``tables.TABLES`` lists it; docs/workspaces.md)."""

from __future__ import annotations

from piccolo.columns import UUID, Integer, Timestamptz, Varchar
from piccolo.columns.defaults.timestamptz import TimestamptzNow
from piccolo.table import Table


class Workspace(Table, tablename="workspace"):
    """A tenant: everything a team holds (principals, subjects, runs...) names one."""

    id = UUID(primary_key=True)
    name = Varchar(length=100, unique=True)
    #: ``active`` or ``suspended`` (its tokens refused, its timers do not act on people).
    status = Varchar(length=20, default="active")
    #: Limits; null: none. Live runs, open slots, API requests per minute.
    max_runs = Integer(null=True, default=None)
    max_open_slots = Integer(null=True, default=None)
    requests_per_minute = Integer(null=True, default=None)
    created_at = Timestamptz(default=TimestamptzNow())
