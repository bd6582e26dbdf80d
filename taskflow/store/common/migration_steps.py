"""The steps of a migration that runs raw SQL (migrations/): each direction is a list of
statements run in order, so a migration only declares its SQL.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence

from piccolo.apps.migrations.auto.migration_manager import MigrationManager
from piccolo.table import Table


class _Raw(Table):
    """Runs the raw statements; it names no table of the schema."""


def _escaped(text: str) -> str:
    """``raw()`` formats its text (``{}`` are placeholders), so literal braces are doubled."""
    return text.replace("{", "{{").replace("}", "}}")


def _steps(statements: Sequence[str]) -> Callable[[], Awaitable[None]]:
    async def step() -> None:
        for statement in statements:
            await _Raw.raw(_escaped(statement))

    return step


def run_sql(
    migration_id: str, description: str, forwards: Sequence[str], backwards: Sequence[str]
) -> MigrationManager:
    """The migration ``migration_id`` running ``forwards`` in order, and ``backwards`` to undo."""
    manager = MigrationManager(
        migration_id=migration_id, app_name="taskflow", description=description
    )
    manager.add_raw(_steps(tuple(forwards)))
    manager.add_raw_backwards(_steps(tuple(backwards)))
    return manager


def replace_sql(migration_id: str, description: str, new: str, previous: str) -> MigrationManager:
    """The migration replacing an object by ``new`` (``CREATE OR REPLACE``), ``previous`` back."""
    return run_sql(migration_id, description, [new], [previous])


def run_steps(
    migration_id: str,
    description: str,
    forwards: Sequence[tuple[str | None, str]],
    backwards: Sequence[str],
    *,
    in_transaction: bool = True,
) -> MigrationManager:
    """Like :func:`run_sql`, each forward statement run only when its condition (a query
    answering one boolean, or None: always) holds: for statements no ``DO`` block can hold
    (``CREATE INDEX CONCURRENTLY``) in a migration that may run again after stopping
    half-way; ``in_transaction=False`` runs each statement on its own."""
    manager = MigrationManager(
        migration_id=migration_id,
        app_name="taskflow",
        description=description,
        wrap_in_transaction=in_transaction,
    )

    async def step() -> None:
        for condition, statement in forwards:
            if condition is not None:
                answer = await _Raw.raw(_escaped(condition))
                if not answer or not next(iter(answer[0].values())):
                    continue
            await _Raw.raw(_escaped(statement))

    manager.add_raw(step)
    manager.add_raw_backwards(_steps(tuple(backwards)))
    return manager
