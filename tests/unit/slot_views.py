"""A slot as the core sees it, for the pure tests that need one without a run."""

from __future__ import annotations

from typing import Any

from taskflow.core.definition import audience as au
from taskflow.core.runs.model import SlotView


def slot_view(keys: frozenset[str], **changes: Any) -> SlotView:
    """An open slot ``n`` of run ``r`` whose audience is ``keys``; ``changes`` set other fields."""
    fields: dict[str, Any] = {
        "id": "s",
        "run_id": "r",
        "visit": 1,
        "state": "a",
        "name": "n",
        "waits_for": "e",
        "status": "open",
        "audience": au.Audience(keys=keys),
        "delegates": au.Audience(keys=frozenset()),
        "priority": 3,
        "label": "l",
    }
    return SlotView(**{**fields, **changes})
