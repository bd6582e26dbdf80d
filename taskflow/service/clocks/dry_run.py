"""SLA dry runs (``slaDryRun``, ``taskflow sla dry-run FILE``): a request checked, played
by the core on a scratch clock (``core/clocks/dry_run.py``), the answer as JSON.

Nothing here touches the database: the definition comes from the loaded catalog, the
calendars from their files, and the play happens in memory.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from taskflow import errors
from taskflow.core.clocks import calendars, clocks, dry_run, dry_run_answer
from taskflow.service.versions import definitions

#: The keys of a dry-run file (``taskflow sla dry-run FILE``).
FILE_KEYS = frozenset({"workflow", "version", "subject", "events"})


def play(
    catalog: definitions.Catalog,
    registry: calendars.Registry,
    *,
    workflow: str,
    version: int | None,
    subject: Any,
    events: Sequence[Mapping[str, Any]],
    at_risk: float = clocks.DEFAULT_AT_RISK,
) -> dry_run_answer.Answer:
    """Play ``events`` for a run of ``workflow`` (``version``, default the latest) on
    ``subject``: NOT_FOUND for an unknown workflow, INVALID_INPUT for a subject that is not
    an object, the core's refusals for the events."""
    definition = catalog.get(workflow, version)
    if not isinstance(subject, Mapping):
        raise errors.ValidationError(
            'subject must be an object of attributes, e.g. {"priority": "P2"}.',
            field="subject",
        )
    return dry_run.play(definition, registry, subject, events, at_risk)


def play_file(
    catalog: definitions.Catalog, registry: calendars.Registry, document: Any
) -> dry_run_answer.Answer:
    """A dry-run file's document: ``{workflow, version?, subject, events}``."""
    if not isinstance(document, Mapping):
        raise errors.ValidationError(
            "a dry-run file holds one JSON object {workflow, subject, events}"
        )
    unknown = sorted(set(document) - FILE_KEYS)
    if unknown:
        raise errors.ValidationError(
            f"unknown key {unknown[0]!r}; a dry-run file has {', '.join(sorted(FILE_KEYS))}",
            field=unknown[0],
        )
    workflow, version, events = (
        document.get("workflow"),
        document.get("version"),
        document.get("events"),
    )
    if not isinstance(workflow, str):
        raise errors.ValidationError("workflow is required: a workflow's name", field="workflow")
    if version is not None and (not isinstance(version, int) or isinstance(version, bool)):
        raise errors.ValidationError("version must be a whole number", field="version")
    if not isinstance(events, list):
        raise errors.ValidationError(
            "events is required: a list of {at, kind, ...}", field="events"
        )
    return play(
        catalog,
        registry,
        workflow=workflow,
        version=version,
        subject=document.get("subject", {}),
        events=events,
    )


def to_json_value(value: Any) -> Any:
    """``value`` with its instants as ISO 8601 text, its tuples as lists (JSON-ready)."""
    if isinstance(value, datetime):
        return value.isoformat()
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        # Field by field (``dataclasses.asdict`` deep-copies every value first).
        return {f.name: to_json_value(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, Mapping):
        return {str(k): to_json_value(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_json_value(v) for v in value]
    return value


def to_json(answer: dry_run_answer.Answer) -> dict[str, Any]:
    """The answer as JSON-ready data (instants as ISO 8601 text), each milestone without its
    ledger (the other fields are what follows from it)."""
    found: dict[str, Any] = to_json_value(dataclasses.replace(answer, milestones=[]))
    found["milestones"] = [
        {
            f.name: to_json_value(getattr(m, f.name))
            for f in dataclasses.fields(m)
            if f.name != "ledger"
        }
        for m in answer.milestones
    ]
    return found
