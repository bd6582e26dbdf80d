"""The services a process runs with, built once by the composition root."""

from __future__ import annotations

from dataclasses import dataclass

from taskflow import clock as clocks
from taskflow.config import Settings
from taskflow.service import tokens
from taskflow.store import db


@dataclass
class Services:
    """What every use case needs: the database, the clock, the signers, the settings."""

    db: db.Database
    clock: clocks.Clock
    staff_tokens: tokens.StaffTokens
    settings: Settings


def build(database: db.Database, settings: Settings, clock: clocks.Clock) -> Services:
    """Wire the services for ``settings`` on an open ``database``."""
    return Services(
        db=database,
        clock=clock,
        staff_tokens=tokens.StaffTokens(settings.secret_keys),
        settings=settings,
    )
