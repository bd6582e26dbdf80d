"""The Piccolo app: its tables and the top-level ``migrations/`` folder."""

from __future__ import annotations

from pathlib import Path

from piccolo.conf.apps import AppConfig

from taskflow.store.common import tables

MIGRATIONS_FOLDER = Path(__file__).resolve().parents[3] / "migrations"

APP_CONFIG = AppConfig(
    app_name="taskflow",
    migrations_folder_path=str(MIGRATIONS_FOLDER),
    table_classes=list(tables.TABLES),
    migration_dependencies=[],
    commands=[],
)
