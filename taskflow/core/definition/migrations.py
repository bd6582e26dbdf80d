"""Run migrations in the DSL: what happens to runs parked in each state of an earlier version.

A version declares, per state of an earlier version, one step::

    from taskflow import migration

    class ExpenseApprovalV2(Workflow):
        name = "expense-approval"
        version = 2
        migrations = [
            migration.from_version(
                1,
                submitted=migration.stay,              # same state, same slots: kept as is
                awaiting_answer=migration.to("submitted"),  # old slots closed, state entered
                archived=migration.cancel("archiving was retired"),
            )
        ]

Checked at load (:func:`problems` here, :func:`cross_problems` with the earlier
version when it is loaded too) and planned by :func:`plan` (``taskflow runs
migrate --plan``); ``service/run_migrations.py`` applies them (docs/versions.md).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from taskflow.core.definition.problems import Problem

if TYPE_CHECKING:
    from taskflow.core.definition.workflow import Definition

STAY, TO, CANCEL = "stay", "to", "cancel"


@dataclass(frozen=True)
class Step:
    """What happens to a run parked in one state: ``stay``, ``to(state)`` or ``cancel(reason)``."""

    kind: str
    target: str | None = None
    reason: str | None = None

    def to_json(self) -> dict[str, Any]:
        """The step in the definition's document."""
        doc: dict[str, Any] = {"kind": self.kind}
        if self.target is not None:
            doc["to"] = self.target
        if self.reason is not None:
            doc["reason"] = self.reason
        return doc

    def describe(self) -> str:
        """``stay``, ``to submitted``, ``cancel (reason)``."""
        if self.kind == TO:
            return f"to {self.target}"
        if self.kind == CANCEL:
            return f"cancel ({self.reason})"
        return self.kind


#: Runs stay in the state of the same name (it must exist with the old state's slots).
stay = Step(STAY)


def to(state: str) -> Step:
    """Runs move to ``state``: the old state's open slots close as migrated, ``state`` is
    entered (its slots open with new clocks)."""
    return Step(TO, target=state)


def cancel(reason: str) -> Step:
    """Runs are cancelled with ``reason`` (their open slots cancelled, clocks stopped)."""
    return Step(CANCEL, reason=reason)


@dataclass(frozen=True)
class Migration:
    """The steps for runs of one earlier version, by the state they are parked in."""

    from_version: int
    steps: tuple[tuple[str, Step], ...]

    def step(self, state: str) -> Step | None:
        """The step declared for ``state``; None when it is not covered."""
        return dict(self.steps).get(state)

    def to_json(self) -> dict[str, Any]:
        return {
            "from_version": self.from_version,
            "states": {n: s.to_json() for n, s in self.steps},
        }


def from_version(version: int, **steps: Step) -> Migration:
    """The migration of runs on ``version``: one step per state name (``state=stay``)."""
    return Migration(version, tuple(steps.items()))


# -- checks ---------------------------------------------------------------------------------------


def _problem(d: Definition, where: str, code: str, message: str, fix: str) -> Problem:
    return Problem(code, d.name, where, message, fix, d.source)


def problems(definition: Definition) -> list[Problem]:
    """What is wrong with ``definition``'s migrations on their own."""
    found: list[Problem] = []
    seen: set[int] = set()
    for m in definition.migrations:
        where = f"migration from version {m.from_version}"
        if not 1 <= m.from_version < definition.version:
            found.append(
                _problem(
                    definition,
                    where,
                    "MIGRATION_VERSION",
                    f"a migration must come from an earlier version than {definition.version}",
                    "name a lower version in migration.from_version",
                )
            )
        if m.from_version in seen:
            found.append(
                _problem(
                    definition,
                    where,
                    "MIGRATION_DUPLICATE",
                    "declared twice",
                    "merge the two into one migration.from_version",
                )
            )
        seen.add(m.from_version)
        for state, step in m.steps:
            at = f"{where} / state {state}"
            if not isinstance(step, Step):
                found.append(
                    _problem(
                        definition,
                        at,
                        "MIGRATION_STEP",
                        f"{step!r} is not a step",
                        "use migration.stay, migration.to('state') or migration.cancel('reason')",
                    )
                )
            elif step.kind == TO and not definition.has_state(step.target or ""):
                found.append(
                    _problem(
                        definition,
                        at,
                        "MIGRATION_TARGET",
                        f"target state {step.target!r} does not exist in version "
                        f"{definition.version}",
                        "name a state of this version",
                    )
                )
            elif step.kind == STAY and not definition.has_state(state):
                found.append(
                    _problem(
                        definition,
                        at,
                        "MIGRATION_STAY",
                        f"runs cannot stay in {state!r}: version {definition.version} has no such "
                        "state",
                        "use migration.to('<a state of this version>') or cancel",
                    )
                )
            elif step.kind == CANCEL and not (step.reason or "").strip():
                found.append(
                    _problem(
                        definition,
                        at,
                        "MIGRATION_REASON",
                        "a cancel needs a reason",
                        "write migration.cancel('why')",
                    )
                )
    return found


def cross_problems(definition: Definition, earlier: Mapping[int, Definition]) -> list[Problem]:
    """What is wrong with ``definition``'s migrations against the earlier versions loaded
    beside it (``earlier`` by version; versions not loaded are not checked)."""
    found: list[Problem] = []
    for m in definition.migrations:
        old = earlier.get(m.from_version)
        if old is None:
            continue
        where = f"migration from version {m.from_version}"
        declared = dict(m.steps)
        for state in old.states:
            step = declared.get(state.name)
            if step is None:
                if not state.terminal:
                    found.append(
                        _problem(
                            definition,
                            where,
                            "MIGRATION_UNCOVERED",
                            f"state {state.name!r} of version {m.from_version} has no step",
                            f"add {state.name}=migration.stay, .to('...') or .cancel('...')",
                        )
                    )
                continue
            if step.kind == STAY and definition.has_state(state.name):
                new_slots = {s.name for s in definition.state(state.name).slots}
                lost = [s.name for s in state.slots if s.name not in new_slots]
                if lost:
                    found.append(
                        _problem(
                            definition,
                            f"{where} / state {state.name}",
                            "MIGRATION_SLOTS",
                            f"runs cannot stay: slot(s) {', '.join(lost)} of version "
                            f"{m.from_version} are not in this version's state",
                            "keep those slots, or use migration.to('...')",
                        )
                    )
        for name in declared:
            if not old.has_state(name):
                found.append(
                    _problem(
                        definition,
                        f"{where} / state {name}",
                        "MIGRATION_UNKNOWN_STATE",
                        f"version {m.from_version} has no state {name!r}",
                        "name the states of the earlier version",
                    )
                )
    return found


# -- plans ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PlanLine:
    """Runs of one (version, state) and what a migration to the target would do to them."""

    from_version: int
    state: str
    runs: int
    step: Step | None
    #: What happens to slots and clocks, in words.
    effect: str


def _milestoned(definition: Definition | None, state: str) -> list[str]:
    if definition is None or not definition.has_state(state):
        return []
    return [s.name for s in definition.state(state).slots if s.milestones]


def plan(
    target: Definition,
    counts: Mapping[tuple[int, str], int],
    earlier: Mapping[int, Definition],
) -> list[PlanLine]:
    """Per (version, state) of live runs not on ``target``'s version, what would happen."""
    migrations = {m.from_version: m for m in target.migrations}
    lines: list[PlanLine] = []
    for (version, state), runs in sorted(counts.items()):
        if version == target.version:
            continue
        m = migrations.get(version)
        step = m.step(state) if m else None
        old = earlier.get(version)
        if m is None:
            effect = f"no migration from version {version} is declared: runs stay on it"
        elif step is None:
            effect = "no step for this state: runs stay on their version"
        elif step.kind == STAY:
            effect = "state, slots, holders and clock ledgers kept"
        elif step.kind == TO:
            closed = _milestoned(old, state)
            opened = _milestoned(target, step.target or "")
            effect = (
                f"open slots closed as migrated (clocks stop: {', '.join(closed) or 'none'}); "
                f"{step.target} entered (new clocks: {', '.join(opened) or 'none'})"
            )
        else:
            closed = _milestoned(old, state)
            effect = f"run cancelled (clocks stop: {', '.join(closed) or 'none'})"
        lines.append(PlanLine(version, state, runs, step, effect))
    return lines


def totals(lines: Iterable[PlanLine]) -> dict[str, int]:
    """Runs per step kind (``none`` when no step applies)."""
    found: dict[str, int] = {}
    for line in lines:
        kind = line.step.kind if line.step else "none"
        found[kind] = found.get(kind, 0) + line.runs
    return found
