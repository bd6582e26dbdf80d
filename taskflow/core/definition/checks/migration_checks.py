"""Load-time checks of the run migrations a version declares (``migrations.py``).

:func:`problems` checks a definition's migrations on their own (targets exist,
a stay's state and its renamed slots exist, clock kinds, reasons);
:func:`cross_problems` checks them against the earlier version when it is
loaded too (every live state covered, a stay keeps every slot by name or by a
mapping, and a mapped slot is compatible with the one it becomes).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from taskflow.core.definition.checks.problems import Problem
from taskflow.core.definition.migrations import CANCEL, CLOCK_KINDS, STAY, TO, Step

if TYPE_CHECKING:
    from taskflow.core.definition.migrations import Earlier
    from taskflow.core.definition.model import Slot, State
    from taskflow.core.definition.workflow import Definition
    from taskflow.core.versions.shapes import SlotShape, StateShape


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
            found += _step_problems(definition, f"{where} / state {state}", state, step)
    return found


def _step_problems(definition: Definition, at: str, state: str, step: object) -> list[Problem]:
    if not isinstance(step, Step):
        return [
            _problem(
                definition,
                at,
                "MIGRATION_STEP",
                f"{step!r} is not a step",
                "use migration.stay, migration.to('state') or migration.cancel('reason')",
            )
        ]
    if step.kind == TO and not definition.has_state(step.target or ""):
        return [
            _problem(
                definition,
                at,
                "MIGRATION_TARGET",
                f"target state {step.target!r} does not exist in version {definition.version}",
                "name a state of this version",
            )
        ]
    if step.kind == CANCEL and not (step.reason or "").strip():
        return [
            _problem(
                definition,
                at,
                "MIGRATION_REASON",
                "a cancel needs a reason",
                "write migration.cancel('why')",
            )
        ]
    if step.kind != STAY:
        return []
    name = step.state_after(state) or state
    if not definition.has_state(name):
        return [
            _problem(
                definition,
                at,
                "MIGRATION_STAY",
                f"runs cannot stay in {name!r}: version {definition.version} has no such state",
                "use migration.to('<a state of this version>') or cancel, or name the state "
                "the runs stay in: migration.stay('<its new name>')",
            )
        ]
    found = []
    new_slots = {s.name for s in definition.state(name).slots}
    targets = [new for _, new in step.slots]
    for new in sorted(set(targets)):
        if new not in new_slots:
            found.append(
                _problem(
                    definition,
                    at,
                    "MIGRATION_SLOT_TARGET",
                    f"slot {new!r} is not in state {name!r} of version {definition.version}",
                    f"map to one of its slots: {', '.join(sorted(new_slots)) or 'it has none'}",
                )
            )
        elif targets.count(new) > 1:
            found.append(
                _problem(
                    definition,
                    at,
                    "MIGRATION_SLOT_TARGET",
                    f"two slots are mapped to {new!r}",
                    "map each old slot to a slot of its own",
                )
            )
    wrong = [k for k in step.restart if k not in CLOCK_KINDS]
    if wrong:
        found.append(
            _problem(
                definition,
                at,
                "MIGRATION_RESTART",
                f"restart_clocks names {', '.join(map(repr, wrong))}, not a milestone",
                "write restart_clocks=True, or a list of 'assigned' and 'finished'",
            )
        )
    return found


def cross_problems(definition: Definition, earlier: Mapping[int, Earlier]) -> list[Problem]:
    """What is wrong with ``definition``'s migrations against the earlier versions loaded
    beside it, or read back from their recorded documents (``earlier`` by version;
    versions in neither are not checked)."""
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
            if not isinstance(step, Step) or step.kind != STAY:
                continue
            name = step.state_after(state.name)
            if name is not None and definition.has_state(name):
                found += _kept_slots(
                    definition, f"{where} / state {state.name}", m.from_version, state, step
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


def _kept_slots(
    definition: Definition, at: str, version: int, old: State | StateShape, step: Step
) -> list[Problem]:
    """A stay keeps every slot of the old state, by name or by its mapping, as a compatible
    slot (both per item of a ``foreach`` or neither; fields of one name of one type)."""
    new_state = definition.state(step.state_after(old.name) or old.name)
    new_slots = {s.name: s for s in new_state.slots}
    found = []
    old_names = {s.name for s in old.slots}
    unknown = [a for a, _ in step.slots if a not in old_names]
    if unknown:
        found.append(
            _problem(
                definition,
                at,
                "MIGRATION_SLOTS",
                f"slot(s) {', '.join(unknown)} are not in state {old.name!r} of version {version}",
                "map the slots the earlier version's state has",
            )
        )
    lost = [s.name for s in old.slots if step.slot_after(s.name) not in new_slots]
    if lost:
        found.append(
            _problem(
                definition,
                at,
                "MIGRATION_SLOTS",
                f"runs cannot stay: slot(s) {', '.join(lost)} of version {version} are not in "
                "this version's state",
                "keep those slots, map them to slots of this version "
                "(migration.stay(slots={'old': 'new'})), or use migration.to('...')",
            )
        )
    for slot in old.slots:
        new = new_slots.get(step.slot_after(slot.name))
        if new is not None and (why := _incompatible(slot, new)):
            found.append(
                _problem(
                    definition,
                    at,
                    "MIGRATION_SLOT_INCOMPATIBLE",
                    f"slot {slot.name!r} of version {version} cannot become {new.name!r}: {why}",
                    "keep the slot's shape, or use migration.to('...') to close it and open "
                    "the new one",
                )
            )
    return found


def _incompatible(old: Slot | SlotShape, new: Slot) -> str | None:
    if (old.foreach is None) != (new.foreach is None):
        return "one opens per item of a foreach, the other once"
    types = {f.name: f.type for f in old.fields}
    changed = [f.name for f in new.fields if f.name in types and types[f.name] != f.type]
    if changed:
        return f"field(s) {', '.join(changed)} change type"
    return None
