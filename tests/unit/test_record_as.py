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


@dataclass(frozen=True)
class _Checked:
    id: str
    count: int = 0

    def __post_init__(self) -> None:
        if self.count < 0:
            raise ValueError("count must not be negative")


def test_a_dataclass_that_checks_itself_is_built_by_its_init() -> None:
    assert db.record_as(_Checked, {"id": "1"}) == _Checked("1", 0)
    with pytest.raises(ValueError, match="negative"):
        db.record_as(_Checked, {"id": "1", "count": -1})


def test_a_filled_instance_is_the_one_init_makes() -> None:
    row = {"id": "1", "run_id": "r", "tags": ["x"], "details": {}}
    made, built = db.record_as(_Thing, row), _Thing("1", "r", ("x",), {})
    assert made == built
    assert vars(made) == vars(built)
    assert hash((made.id, made.tags)) == hash((built.id, built.tags))
    assert made.extra == []
    assert made.extra is not db.record_as(_Thing, row).extra
    with pytest.raises(AttributeError):
        made.id = "2"  # type: ignore[misc]
    with pytest.raises(TypeError):
        db.record_as(_Thing, row, unknown=1)
