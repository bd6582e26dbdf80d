"""Fixtures of the event and link-recipient tests: services with ``event_workflows.py``.

Import them into a test module (``from tests.api.event_fixtures import api, ...``).
"""

from __future__ import annotations

from pathlib import Path

from tests.conftest import app_with

HERE = Path(__file__).resolve().parent


event_services, api, tokens = app_with("event_services", HERE / "event_workflows.py")
