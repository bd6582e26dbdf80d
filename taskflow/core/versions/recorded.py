"""A version that left the code, read back from its recorded document for reads only (pure).

The registry (``deployed_definition``, docs/versions.md) keeps every deployed version's
document. When a version's class is no longer loaded, its runs are still read: their
states and slots are labelled, a slot's form shows its fields, a run's checklist its
preconditions. :func:`from_document` rebuilds a :class:`Definition` holding just that
(states with their labels, slots with their labels and fields, preconditions) and no
behaviour: no routes, moves, timeouts, reminders or hooks, so nothing can act on it. The
catalog serves it to reads only (``Catalog.for_reading``); every act on such a run asks
for the loaded version and is refused, naming ``taskflow runs migrate``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from taskflow.core.definition import fields as fl
from taskflow.core.definition import workflow as wf
from taskflow.core.definition.conditions import expr_data as exd
from taskflow.core.definition.model import Precondition, Slot, State
from taskflow.core.files import files as fi


def _field(doc: Mapping[str, Any]) -> fl.Field:
    return fl.Field(
        str(doc["name"]),
        str(doc.get("type") or "text"),
        bool(doc.get("required", True)),
        tuple(str(c) for c in doc.get("choices") or ()),
        label=doc.get("label"),
        help=doc.get("help"),
        content_types=tuple(str(c) for c in doc.get("contentTypes") or ()),
        max_bytes=int(doc.get("maxBytes") or fi.DEFAULT_MAX_BYTES),
        max_files=int(doc.get("maxFiles") or fi.DEFAULT_MAX_FILES),
    )


def _slot(doc: Mapping[str, Any]) -> Slot:
    return Slot(
        str(doc["name"]),
        waits_for=str(doc.get("waits_for") or doc["name"]),
        label=doc.get("label"),
        description=doc.get("description"),
        fields=tuple(_field(f) for f in doc.get("fields") or ()),
        magic_link=bool(doc.get("magic_link")),
        shareable=tuple(str(s) for s in doc.get("shareable") or ()),
    )


def _state(doc: Mapping[str, Any]) -> State:
    return State(
        name=str(doc["name"]),
        label=doc.get("label"),
        description=doc.get("description"),
        initial=bool(doc.get("initial")),
        terminal=bool(doc.get("terminal")),
        pausing=bool(doc.get("pausing")),
        slots=tuple(_slot(s) for s in doc.get("slots") or ()),
        preconditions=tuple(
            Precondition(str(p["name"]), exd.from_json(p["when"]))
            for p in doc.get("preconditions") or ()
        ),
    )


def from_document(doc: Mapping[str, Any], source: str = "recorded document") -> wf.Definition:
    """The read-only definition of a recorded document (``render.document``)."""
    return wf.Definition(
        name=str(doc["name"]),
        version=int(doc["version"]),
        tracks=str(doc.get("tracks") or ""),
        states=tuple(_state(s) for s in doc.get("states") or ()),
        calendar=doc.get("calendar"),
        description=doc.get("description"),
        source=source,
    )
