"""A milestone's own forecast threshold is shown where the API shows its definition."""

from __future__ import annotations

import httpx
import pytest

from taskflow.config import config
from tests.conftest import app_with, gql

pytestmark = pytest.mark.anyio

HERE = config.PROJECT_ROOT / "tests" / "api"
watched, api, tokens = app_with("watched", HERE / "forecast_workflows.py")
WORKFLOWS = (config.PROJECT_ROOT / "graphql" / "operations" / "workflows.graphql").read_text()


async def test_each_milestone_shows_its_forecast_threshold_or_null_for_the_deployments(
    api: httpx.AsyncClient, tokens: dict[str, str]
) -> None:
    answer = await gql(api, WORKFLOWS, {"name": "watched-review"}, token=tokens["sid"])
    [workflow] = answer.ok()["workflows"]
    [review] = [s for s in workflow["latest"]["states"] if s["name"] == "review"]
    [slot] = review["slots"]
    assert slot["milestones"] == [
        {"kind": "assigned", "within": slot["milestones"][0]["within"], "forecastAlert": 0.4},
        {"kind": "finished", "within": slot["milestones"][1]["within"], "forecastAlert": None},
    ]
