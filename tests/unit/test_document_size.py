"""The edge's document sizes (``api/limits.py``): an empty document, or an input object with
no field given, is sized without encoding it, and to the byte of its JSON encoding."""

from __future__ import annotations

import json
from typing import Any

import pytest

from taskflow.api import limits


def _encoded(value: Any) -> int:
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str).encode())


@pytest.mark.parametrize(
    "document",
    [
        {},
        [],
        {"filter": None, "idempotency_key": None},
        {"a": None},
        {"a": 1},
        {"a": None, "b": "x"},
        {"é": None},
        {"x-y": None},
        {'q"': None},
        {1: None},
        [None],
        {"a": {"b": None}},
    ],
)
def test_a_documents_size_is_its_json_encodings(document: Any) -> None:
    assert limits._document_size(document) == _encoded(document)


def test_only_empty_documents_and_unset_input_fields_skip_the_encoder() -> None:
    assert limits._unset_fields_size({"filter": None, "idempotency_key": None}) == 38
    assert limits._unset_fields_size([]) == 2
    for encoded in ({"a": 1}, {"é": None}, [None], {"a": {"b": None}}):
        assert limits._unset_fields_size(encoded) == 0
