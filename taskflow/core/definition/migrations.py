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

Checked at load (``checks/migration_checks.py``: ``problems`` on their own,
``cross_problems`` with the earlier version when it is loaded too) and planned by
:func:`plan` (``taskflow runs migrate --plan``); ``service/versions/run_migrations.py``
applies them (docs/versions.md).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeAlias

if TYPE_CHECKING:
    from taskflow.core.definition.workflow import Definition
    from taskflow.core.versions.shapes import Shape

    #: An earlier version: loaded, or read back from its recorded document.
    Earlier: TypeAlias = Definition | Shape

STAY, TO, CANCEL = "stay", "to", "cancel"

#: The milestone kinds a ``restart_clocks`` may name (``True`` names them all).
CLOCK_KINDS = ("assigned", "finished")


@dataclass(frozen=True)
class Step:
    """What happens to a run parked in one state: ``stay``, ``to(state)`` or ``cancel(reason)``.

    A ``stay`` may name the state the runs stay in under a new name (``target``),
    the slots renamed on the way (``slots``: old name, new name) and the milestone
    clocks that start afresh (``restart``); every other clock keeps its ledger.
    """

    kind: str
    target: str | None = None
    reason: str | None = None
    slots: tuple[tuple[str, str], ...] = ()
    restart: tuple[str, ...] = ()
    #: Awaited child labels renamed on the way (old label, new label; docs/composition.md).
    children: tuple[tuple[str, str], ...] = ()

    def to_json(self) -> dict[str, Any]:
        """The step in the definition's document (parts not declared are left out, so a
        definition that declares none keeps the digest it always had)."""
        doc: dict[str, Any] = {"kind": self.kind}
        if self.target is not None:
            doc["to"] = self.target
        if self.reason is not None:
            doc["reason"] = self.reason
        if self.slots:
            doc["slots"] = dict(self.slots)
        if self.restart:
            doc["restart_clocks"] = list(self.restart)
        if self.children:
            doc["children"] = dict(self.children)
        return doc

    def state_after(self, state: str) -> str | None:
        """The state a run parked in ``state`` is in after this step (None: cancelled)."""
        if self.kind == CANCEL:
            return None
        return self.target or state

    def slot_after(self, name: str) -> str:
        """The name a kept slot has after this step."""
        return dict(self.slots).get(name, name)

    def describe(self) -> str:
        """``stay``, ``stay as approval (slots review -> check)``, ``to submitted``..."""
        if self.kind == TO:
            return f"to {self.target}"
        if self.kind == CANCEL:
            return f"cancel ({self.reason})"
        text = self.kind if self.target is None else f"{self.kind} as {self.target}"
        extra = []
        if self.slots:
            extra.append("slots " + ", ".join(f"{a} -> {b}" for a, b in self.slots))
        if self.restart:
            extra.append("clocks restart: " + ", ".join(self.restart))
        if self.children:
            extra.append("children " + ", ".join(f"{a} -> {b}" for a, b in self.children))
        return f"{text} ({'; '.join(extra)})" if extra else text


class _Stay(Step):
    """``migration.stay``, and called, a stay that renames or restarts (see :meth:`__call__`)."""

    def __call__(
        self,
        state: str | None = None,
        *,
        slots: Mapping[str, str] | None = None,
        restart_clocks: bool | Iterable[str] = False,
        children: Mapping[str, str] | None = None,
    ) -> Step:
        """Runs stay, holders and clock ledgers kept: in ``state`` (the same state under a new
        name; default: the same name), with ``slots`` renamed (``{"old": "new"}``), and the
        unmet clocks of ``restart_clocks`` (True: every milestone; or e.g. ``["finished"]``)
        started afresh at the migration, and the labels of awaited ``children`` renamed
        (``{"old": "new"}``: the wait goes on under the new label)."""
        if restart_clocks is True:
            restart: tuple[str, ...] = CLOCK_KINDS
        elif restart_clocks is False:
            restart = ()
        else:
            restart = tuple(restart_clocks)
        return Step(
            STAY,
            target=state,
            slots=tuple((slots or {}).items()),
            restart=restart,
            children=tuple((children or {}).items()),
        )


#: Runs stay in the state of the same name (it must exist with the old state's slots);
#: ``migration.stay("new_name", slots={"old": "new"}, restart_clocks=True)`` says more.
stay: _Stay = _Stay(STAY)


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


def _milestoned(definition: Earlier | None, state: str) -> list[str]:
    if definition is None:
        return ["those of its slots (its version is not loaded)"]
    if not definition.has_state(state):
        return []
    return [s.name for s in definition.state(state).slots if s.milestones]


def added_slots(step: Step, old: Earlier, state: str, target: Definition) -> list[str]:
    """The slots of the state a ``stay`` keeps runs in that no slot of the old state becomes:
    they open at the migration."""
    name = step.state_after(state) or state
    if not old.has_state(state) or not target.has_state(name):
        return []
    kept = {step.slot_after(s.name) for s in old.state(state).slots}
    return [s.name for s in target.state(name).slots if s.name not in kept]


def _stay_effect(step: Step, state: str, old: Earlier | None, target: Definition) -> str:
    kept = "state, slots, holders and clock ledgers kept"
    if step.target is not None:
        kept += f"; the state is {step.target} now"
    if step.slots:
        kept += "; slots renamed " + ", ".join(f"{a} -> {b}" for a, b in step.slots)
    if step.restart:
        kept += f"; clocks restart: {', '.join(step.restart)}"
    added = added_slots(step, old, state, target) if old is not None else []
    if added:
        kept += f"; new slots open: {', '.join(added)}"
    return kept


def plan(
    target: Definition,
    counts: Mapping[tuple[int, str], int],
    earlier: Mapping[int, Earlier],
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
            effect = _stay_effect(step, state, old, target)
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
