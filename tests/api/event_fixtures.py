"""Fixtures of the event and link-recipient tests: services with ``event_workflows.py``.

Import them into a test module (``from tests.api.event_fixtures import api, ...``).
"""

from __future__ import annotations

from pathlib import Path

from tests.conftest import api_fixtures, services_fixture

HERE = Path(__file__).resolve().parent


event_services = services_fixture(
    "event_services",
    HERE / "event_workflows.py",
    doc="Services with the examples and ``event_workflows.py``.",
)


api, tokens = api_fixtures("event_services")
