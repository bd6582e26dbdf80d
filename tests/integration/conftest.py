"""Fixtures shared by the integration tests."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import services_fixture

HERE = Path(__file__).resolve().parent


sla_services = services_fixture(
    "sla_services",
    HERE / "sla_workflows.py",
    doc="The examples plus the timer tests' workflows (``sla_workflows.py``).",
)


step_services = services_fixture(
    "step_services",
    HERE / "step_workflows.py",
    doc="The examples plus the automatic steps' workflows (``step_workflows.py``).",
)
