"""Regression flags of workflow insights: a definition version whose breach or failure rate
rose by more than a threshold over the version before it (docs/insights.md)."""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from taskflow.core.definition.workflow import Definition

#: A rate that rose by more than this many points over the previous version is flagged.
THRESHOLD_POINTS = 5.0


@dataclass(frozen=True)
class Rates:
    """One workflow version's counts the rates are taken from."""

    workflow: str
    version: int
    #: Slots with a milestone clock ended in the window, and how many breached it.
    measured: int
    breached: int
    #: Runs that ended in the window (completed or cancelled), and how many failed: were
    #: cancelled or completed in a terminal state marked ``failure``.
    ended: int
    failed: int


def failure_states(definitions: Iterable[Definition]) -> list[tuple[str, int, str]]:
    """The (workflow, version, state) of every terminal state marked ``failure``: a run
    completed there failed (``State(terminal=True, failure="expired")``)."""
    return [
        (d.name, d.version, s.name)
        for d in definitions
        for s in d.states
        if s.terminal and s.failure not in (None, False)
    ]


def percent(part: int, whole: int) -> float | None:
    """``part`` of ``whole`` in percent (None: nothing to take a share of)."""
    return 100.0 * part / whole if whole else None


def _rose(now: float | None, before: float | None, threshold: float) -> float | None:
    """The points ``now`` rose over ``before`` when more than ``threshold``, else None."""
    if now is None or before is None or now - before <= threshold:
        return None
    return now - before


def flags(
    rows: Sequence[Rates], threshold: float = THRESHOLD_POINTS
) -> dict[tuple[str, int], list[str]]:
    """For each (workflow, version) of ``rows``, what rose against the workflow's next older
    version listed: ``"breach rate +7.5 points"``, ``"failure rate +12.0 points"``."""
    found: dict[tuple[str, int], list[str]] = {}
    ordered = sorted(rows, key=lambda r: (r.workflow, -r.version))
    for newer, older in itertools.pairwise(ordered):
        if newer.workflow != older.workflow:
            continue
        said = []
        for name, now, before in (
            (
                "breach rate",
                percent(newer.breached, newer.measured),
                percent(older.breached, older.measured),
            ),
            (
                "failure rate",
                percent(newer.failed, newer.ended),
                percent(older.failed, older.ended),
            ),
        ):
            rose = _rose(now, before, threshold)
            if rose is not None:
                said.append(f"{name} +{rose:.1f} points over v{older.version}")
        if said:
            found[(newer.workflow, newer.version)] = said
    return found
