"""What start-up decides about the definitions it loaded against those deployed before.

Pure: the shell reads the recorded definitions and the live run counts, this
module says what is refused (drift at one name and version, versions with
live runs that the loaded code no longer has) and what to record.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from taskflow import errors

#: At most this many lines of a document diff are shown in a refusal.
DIFF_LINES = 24


@dataclass(frozen=True)
class _Facts:
    """A definition's name, version, digest and JSON document."""

    name: str
    version: int
    digest: str
    document: Mapping[str, Any]


@dataclass(frozen=True)
class Loaded(_Facts):
    """A definition the code defines now."""


@dataclass(frozen=True)
class Recorded(_Facts):
    """A definition some earlier start recorded as deployed."""


@dataclass(frozen=True)
class Drift:
    """A loaded definition whose digest differs from the one recorded at its name and version."""

    name: str
    version: int
    recorded_digest: str
    loaded_digest: str
    diff: tuple[str, ...]


@dataclass(frozen=True)
class Missing:
    """A version live runs are on that the loaded code does not define."""

    name: str
    version: int
    live_runs: int
    #: The loaded version that declares a migration from this one (None: none does).
    migrated_by: int | None = None
    #: States live runs are parked in that the declared migration has no step for.
    uncovered: tuple[str, ...] = ()


@dataclass(frozen=True)
class Plan:
    """What start-up found: drifts, missing versions, and what to record."""

    drifts: tuple[Drift, ...]
    missing: tuple[Missing, ...]
    #: Loaded definitions not recorded yet (first seen now).
    new: tuple[Loaded, ...]
    #: Missing versions whose live runs a loaded version's migration covers, state by state:
    #: start-up goes on; they wait for ``taskflow runs migrate``.
    migrating: tuple[Missing, ...] = ()


def _lines(document: Mapping[str, Any]) -> list[str]:
    return json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False).splitlines()


def diff(
    recorded: Mapping[str, Any], loaded: Mapping[str, Any], limit: int = DIFF_LINES
) -> tuple[str, ...]:
    """A short unified diff of two documents (recorded first), cut at ``limit`` lines."""
    lines = list(
        difflib.unified_diff(
            _lines(recorded), _lines(loaded), "recorded", "loaded", n=1, lineterm=""
        )
    )
    if len(lines) > limit:
        lines = [*lines[:limit], f"... ({len(lines) - limit} more lines)"]
    return tuple(lines)


def plan(
    loaded: Iterable[Loaded],
    recorded: Iterable[Recorded],
    live_runs: Mapping[tuple[str, int], int],
    live_states: Mapping[tuple[str, int, str], int] | None = None,
    declared: Mapping[tuple[str, int], tuple[int, frozenset[str]]] | None = None,
) -> Plan:
    """Compare what the code loads now with what was deployed and which versions runs are on.

    ``live_states`` counts live runs by (name, version, state); ``declared`` says, per
    (name, earlier version), which loaded version declares a migration from it and the
    states it has steps for. A missing version whose every live state has a step is not
    refused: its runs wait for the migration (``Plan.migrating``).
    """
    known = {(r.name, r.version): r for r in recorded}
    here = {(d.name, d.version): d for d in loaded}
    drifts: list[Drift] = []
    new: list[Loaded] = []
    for key in sorted(here):
        definition = here[key]
        earlier = known.get(key)
        if earlier is None:
            new.append(definition)
        elif earlier.digest != definition.digest:
            drifts.append(
                Drift(
                    definition.name,
                    definition.version,
                    earlier.digest,
                    definition.digest,
                    diff(earlier.document, definition.document),
                )
            )
    missing: list[Missing] = []
    migrating: list[Missing] = []
    for (name, version), count in sorted(live_runs.items()):
        if count <= 0 or (name, version) in here:
            continue
        by = (declared or {}).get((name, version))
        if by is None:
            missing.append(Missing(name, version, count))
            continue
        parked = {
            state
            for (n, v, state), k in (live_states or {}).items()
            if (n, v) == (name, version) and k > 0
        }
        uncovered = tuple(sorted(parked - by[1]))
        (missing if uncovered else migrating).append(
            Missing(name, version, count, by[0], uncovered)
        )
    return Plan(tuple(drifts), tuple(missing), tuple(new), tuple(migrating))


def drift_message(drifts: Sequence[Drift], *, allowed: bool = False) -> str:
    """The refusal (or, when ``allowed``, the warning) for definitions changed in place."""
    parts = []
    for d in drifts:
        parts.append(
            f"workflow {d.name!r} version {d.version} changed since it was deployed "
            f"(recorded {d.recorded_digest[:19]}, loaded {d.loaded_digest[:19]}):\n"
            + "\n".join(f"    {line}" for line in d.diff)
        )
    head = "\n".join(parts)
    if allowed:
        return (
            f"{head}\nTASKFLOW_ALLOW_DEFINITION_DRIFT=true: live runs on these versions now "
            "follow the changed definitions; the recorded documents were replaced."
        )
    return (
        f"{head}\nLive runs on a version follow its definition: bump the version (keep the "
        "old class beside the new one while runs are on it) instead of editing it in place, "
        "or set TASKFLOW_ALLOW_DEFINITION_DRIFT=true for development."
    )


def _runs(n: int) -> str:
    return f"{n} live run{'s' if n != 1 else ''}"


def _missing_line(m: Missing) -> str:
    line = f"{m.name!r} version {m.version}: {_runs(m.live_runs)}"
    if m.uncovered:
        line += (
            f" (version {m.migrated_by}'s migration has no step for state(s) "
            f"{', '.join(m.uncovered)})"
        )
    return line


def missing_message(missing: Sequence[Missing]) -> str:
    """The refusal for versions live runs are on that the code no longer defines."""
    listed = "; ".join(_missing_line(m) for m in missing)
    return (
        f"Live runs are on workflow versions the loaded code does not define ({listed}). "
        "Keep each old version's class beside the new one (e.g. ExpenseApprovalV1 beside "
        "ExpenseApprovalV2) until its runs end, point TASKFLOW_WORKFLOWS at the module "
        "that defines it, or declare in the new version what happens to runs in every "
        "state they are parked in (migration.from_version, docs/versions.md)."
    )


def migrating_message(migrating: Sequence[Missing]) -> str:
    """The warning for versions the code dropped whose live runs a migration covers."""
    parts = [
        f"{m.name!r} version {m.version} is not loaded: its {_runs(m.live_runs)} wait for "
        f"'taskflow runs migrate {m.name} --to {m.migrated_by} --apply'"
        for m in migrating
    ]
    return (
        "; ".join(parts) + ". Until then whatever needs the old version's rules on those "
        "runs fails (their timers are retried)."
    )


class DefinitionDrift(errors.TaskflowError):
    """A loaded definition differs from the one deployed at its name and version."""

    code = "DEFINITION_DRIFT"


class VersionsMissing(errors.TaskflowError):
    """Live runs are on versions the loaded code does not define."""

    code = "DEFINITION_VERSION_MISSING"
