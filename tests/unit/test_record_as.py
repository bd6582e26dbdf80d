"""``store.db.record_as``: a row as a frozen dataclass, with the conversions declared once."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any

import pytest

from taskflow.store.common import db


@dataclass(frozen=True)
class _Thing:
    id: str
    run_id: str
    tags: tuple[str, ...]
    details: dict[str, Any]
    slot_id: str | None = None
    note: str = "none"
    extra: list[int] = field(default_factory=list)


def test_reads_each_field_by_name_with_ids_as_text_and_arrays_as_tuples() -> None:
    key, run = uuid.uuid4(), uuid.uuid4()
    row = {"id": key, "run": run, "tags": ["a", "b"], "details": {"x": 1}, "slot": None}
    thing = db.record_as(_Thing, row, columns=db.REFERENCES)
    assert thing == _Thing(str(key), str(run), ("a", "b"), {"x": 1}, None, "none", [])


def test_prefix_renames_and_given_fields() -> None:
    row = {"t_id": "1", "t_run": "r", "t_tags": [], "t_details": None, "t_note": "kept"}
    thing = db.record_as(_Thing, row, "t_", columns={"run_id": "run"}, details={})
    assert (thing.id, thing.run_id, thing.tags, thing.details, thing.note) == (
        "1",
        "r",
        (),
        {},
        "kept",
    )


def test_a_missing_column_without_a_default_is_an_error() -> None:
    with pytest.raises(KeyError):
        db.record_as(_Thing, {"id": "1", "tags": [], "details": {}}, columns=db.REFERENCES)


def test_a_list_stays_a_list_where_the_field_is_not_a_tuple() -> None:
    row = {"id": "1", "run_id": "r", "tags": [], "details": {}, "extra": [1, 2]}
    assert db.record_as(_Thing, row).extra == [1, 2]
