"""Piccolo table classes: the declared schema, from which migrations are made.

Runtime queries go through asyncpg on explicit connections (see ``db.py``):
each use case owns one transaction on one connection, which keeps Piccolo's
context-variable transactions (a trap with concurrent tasks, STACK-NOTES.md)
out of the hot path. Piccolo declares the schema and runs the migrations.

Indexes Piccolo cannot declare (partial, covering, GIN) are listed in
``EXTRA_INDEXES`` and created by raw steps in the migrations; the schema test
treats them as part of the declaration.
"""

from __future__ import annotations

from piccolo.columns import JSONB, Array, Boolean, Timestamptz, Varchar
from piccolo.columns.defaults.timestamptz import TimestamptzNow
from piccolo.table import Table


class Principal(Table, tablename="principal"):
    """A person (or system account) known to taskflow."""

    id = Varchar(length=200, primary_key=True)
    display_name = Varchar(length=200)
    email = Varchar(length=320, null=True, default=None)
    roles = Array(base_column=Varchar(length=100))
    groups = Array(base_column=Varchar(length=100))
    attributes = JSONB(default="{}")
    time_zone = Varchar(length=64, default="UTC")
    calendar = Varchar(length=100, null=True, default=None)
    active = Boolean(default=True)
    created_at = Timestamptz(default=TimestamptzNow())
    updated_at = Timestamptz(default=TimestamptzNow())


#: Every table, in dependency order (referenced tables first).
TABLES: tuple[type[Table], ...] = (Principal,)

#: Indexes beyond what the table classes can declare: (name, CREATE INDEX statement).
EXTRA_INDEXES: tuple[tuple[str, str], ...] = (
    ("principal_roles_gin", "CREATE INDEX principal_roles_gin ON principal USING gin (roles)"),
)
