"""Piccolo's configuration module (found through ``PICCOLO_CONF``).

The engine's DSN is set at run time by :func:`taskflow.store.common.migrate.migrate`,
since the embedded database's address is only known once it has started.
"""

from __future__ import annotations

import os

from piccolo.conf.apps import AppRegistry
from piccolo.engine.postgres import PostgresEngine

DB = PostgresEngine(
    config={"dsn": os.environ.get("TASKFLOW_MIGRATION_URL", "postgresql:///taskflow")},
    extensions=(),
)

APP_REGISTRY = AppRegistry(apps=["taskflow.store.common.piccolo_app"])
