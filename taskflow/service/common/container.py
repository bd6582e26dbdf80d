"""The services a process runs with, built once by the composition root."""

from __future__ import annotations

from dataclasses import dataclass, field

from taskflow import clock as clocks
from taskflow.config.config import Settings
from taskflow.core.clocks import calendars
from taskflow.service.access import callers, tokens
from taskflow.service.clocks import calendar_files
from taskflow.service.delivery import webhook_net
from taskflow.service.versions import definitions
from taskflow.service.workspaces import limits as workspace_limits
from taskflow.store.common import db
from taskflow.store.files import storage


@dataclass
class Services:
    """What every use case needs: the database, the clock, the signers, the settings."""

    db: db.Database
    clock: clocks.Clock
    staff_tokens: tokens.StaffTokens
    settings: Settings
    calendars: calendars.Registry
    catalog: definitions.Catalog
    #: The principals this process authenticated (``service/access/callers.py``).
    callers: callers.KnownCallers = field(default_factory=callers.KnownCallers)
    #: Each workspace's requests this minute, in this process (its requestsPerMinute limit).
    request_rates: workspace_limits.RequestRates = field(
        default_factory=workspace_limits.RequestRates
    )
    #: How webhook endpoint hosts are resolved (the system's DNS; tests answer their own).
    resolver: webhook_net.Resolver = webhook_net.system_resolve
    #: Where attached files are kept (``service/files/files.storage`` builds it on first use).
    file_storage: storage.Storage | None = None


def load_definitions(settings: Settings) -> tuple[calendars.Registry, definitions.Catalog]:
    """The calendars and workflow definitions ``settings`` point at, validated together."""
    registry = calendar_files.load_folder(settings.calendars)
    catalog = definitions.load(settings.workflows, registry.names())
    return registry, catalog


def build(
    database: db.Database,
    settings: Settings,
    clock: clocks.Clock,
    loaded: tuple[calendars.Registry, definitions.Catalog] | None = None,
) -> Services:
    """Wire the services for ``settings`` on an open ``database``."""
    registry, catalog = loaded if loaded is not None else load_definitions(settings)
    return Services(
        db=database,
        clock=clock,
        staff_tokens=tokens.StaffTokens(settings.secret_keys),
        settings=settings,
        calendars=registry,
        catalog=catalog,
    )
