"""Load-time checks of a definition: every problem is found and reported at once.

Each problem names the workflow, the state (and slot) and the fix; the codes
are listed in docs/definitions.md ("Validation").
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping
from typing import Final

from taskflow.core.definition import audience as au
from taskflow.core.definition import budgets as bu
from taskflow.core.definition import expr as ex
from taskflow.core.definition import fields as fl
from taskflow.core.definition import labels, sla
from taskflow.core.definition.model import Slot, State
from taskflow.core.definition.problems import DefinitionError, Problem
from taskflow.core.definition.workflow import Definition

_NAME: Final = re.compile(r"^[a-z][a-z0-9_-]*$")
_DAY_LENGTH_SECONDS: Final = bu.DEFAULT_DAY_LENGTH.total_seconds()


class _Checker:
    """Collects problems for one definition."""

    def __init__(self, definition: Definition, known_calendars: Collection[str] | None) -> None:
        self.d = definition
        self.calendars = known_calendars
        self.found: list[Problem] = []
        self.state_names = {s.name for s in definition.states}
        self.slot_fields = {sl.name: {f.name for f in sl.fields} for _, sl in definition.slots()}

    def add(self, code: str, where: str, message: str, fix: str) -> None:
        self.found.append(Problem(code, self.d.name, where, message, fix, self.d.source))

    # -- shared checks --------------------------------------------------------------------------

    def duplicates(self, where: str, kind: str, names: Iterable[str]) -> None:
        seen: set[str] = set()
        for name in names:
            if name in seen:
                self.add(
                    "DUPLICATE_NAME",
                    where,
                    f"two {kind}s are called {name!r}",
                    f"give each {kind} a unique name",
                )
            seen.add(name)

    def target(self, where: str, what: str, name: str | None) -> None:
        if name is not None and name not in self.state_names:
            known = ", ".join(sorted(self.state_names))
            self.add(
                "UNKNOWN_STATE",
                where,
                f"{what} names state {name!r}, which does not exist",
                f"use one of: {known}, or declare a state called {name!r}",
            )

    def calendar(self, where: str, name: str | None) -> None:
        if name is None or self.calendars is None or name in self.calendars:
            return
        known = ", ".join(sorted(self.calendars)) or "none are loaded"
        self.add(
            "UNKNOWN_CALENDAR",
            where,
            f"calendar {name!r} is not defined",
            f"use one of the known calendars ({known}) or add calendars/{name}.toml",
        )

    def refs(
        self, where: str, what: str, refs: Iterable[ex.Ref | str], roots: Collection[str]
    ) -> None:
        for ref in refs:
            if isinstance(ref, str):
                self.add(
                    "BAD_REFERENCE",
                    where,
                    f"{what} reads {{{ref}}}, which is not a path",
                    "write a path such as {subject.reference} or {item}",
                )
                continue
            if ref.root not in roots:
                self.add(
                    "BAD_REFERENCE",
                    where,
                    f"{what} reads {ref.dotted}, but only {', '.join(roots)} can be read there",
                    "item exists only in foreach slots; principal only in move guards"
                    " and preconditions",
                )
            elif ref.root == "payload":
                self.payload_ref(where, what, ref)

    def payload_ref(self, where: str, what: str, ref: ex.Ref) -> None:
        if not ref.parts:
            self.add(
                "BAD_REFERENCE",
                where,
                f"{what} reads payload without a slot name",
                "write payload.<slot>.<field>, e.g. payload.review.decision",
            )
            return
        slot = ref.parts[0]
        if slot not in self.slot_fields:
            self.add(
                "BAD_REFERENCE",
                where,
                f"{what} reads {ref.dotted}, but no slot is called {slot!r}",
                f"use one of the slots: {', '.join(sorted(self.slot_fields))}",
            )
        elif (
            len(ref.parts) > 1
            and self.slot_fields[slot]
            and ref.parts[1] not in self.slot_fields[slot]
        ):
            self.add(
                "BAD_REFERENCE",
                where,
                f"{what} reads {ref.dotted}, but slot {slot!r} has no field {ref.parts[1]!r}",
                f"use one of its fields: {', '.join(sorted(self.slot_fields[slot]))}",
            )

    def condition(
        self, where: str, what: str, cond: ex.Expr | None, roots: Collection[str]
    ) -> None:
        if cond is not None:
            self.refs(where, what, ex.refs(cond), roots)

    def who(
        self,
        where: str,
        what: str,
        w: au.Who | None,
        roots: Collection[str],
        specials: Collection[str],
    ) -> None:
        if w is None:
            return
        self.refs(where, what, au.refs(w), roots)
        for special in sorted(au.specials(w) - set(specials)):
            self.add(
                "BAD_AUDIENCE",
                where,
                f"{what} uses who.{special}(), which means nothing here",
                "who.holder() and who.candidates() belong in reminders and timeouts",
            )

    def budget(self, where: str, what: str, budget: bu.BudgetLike, roots: Collection[str]) -> None:
        items = budget.budgets() if isinstance(budget, bu.BudgetTable) else (budget,)
        for b in items:
            if not b.amount > 0:
                self.add(
                    "NON_POSITIVE_BUDGET",
                    where,
                    f"{what} is {b.amount} {b.unit}",
                    "give a budget greater than zero",
                )
            self.calendar(where, b.calendar)
        if isinstance(budget, bu.BudgetTable):
            self.refs(where, what, ex.refs(budget.key), roots)

    def fields(self, where: str, fields: Iterable[fl.Field]) -> None:
        fields = tuple(fields)
        self.duplicates(where, "field", (f.name for f in fields))
        for f in fields:
            if f.type not in fl.FIELD_TYPES:
                self.add(
                    "UNKNOWN_FIELD_TYPE",
                    f"{where} / field {f.name!r}",
                    f"field type {f.type!r} is not known",
                    f"use one of: {', '.join(fl.FIELD_TYPES)}",
                )
            elif f.type == "choice" and not f.choices:
                self.add(
                    "BAD_FIELD",
                    f"{where} / field {f.name!r}",
                    "a choice field has no choices",
                    "list them: Field.choice(name, ['yes', 'no'])",
                )

    # -- the definition -------------------------------------------------------------------------

    def run(self) -> list[Problem]:
        d = self.d
        if not _NAME.match(d.name):
            self.add(
                "BAD_NAME",
                "",
                f"the name {d.name!r} is not a workflow name",
                "use lower-case letters, digits and dashes, e.g. 'expense-approval'",
            )
        if not isinstance(d.version, int) or isinstance(d.version, bool) or d.version < 1:
            self.add(
                "BAD_VERSION",
                "",
                f"version {d.version!r} is not a positive integer",
                "set version = 1, and increase it for each change",
            )
        if not d.tracks:
            self.add(
                "NO_TRACKS",
                "",
                "the workflow does not say what it tracks",
                "set tracks = '<entity type>', e.g. tracks = 'expense'",
            )
        self.calendar("", d.calendar)
        if d.correlate_by is not None and not (
            isinstance(d.correlate_by, ex.Ref) and d.correlate_by.root == "subject"
        ):
            self.add(
                "BAD_REFERENCE",
                "correlate_by",
                "correlate_by is not a subject field",
                "write correlate_by = subject.<field>, e.g. subject.reference",
            )
        if not d.states:
            self.add(
                "NO_STATES",
                "",
                "the workflow declares no states",
                "declare states as class attributes: submitted = State(initial=True, ...)",
            )
            return self.found
        self.duplicates("", "state", (s.name for s in d.states))
        initials = [s.name for s in d.states if s.initial]
        if len(initials) > 1:
            self.add(
                "MANY_INITIAL_STATES",
                "",
                f"states {', '.join(initials)} are all initial",
                "mark exactly one state initial=True",
            )
        if d.initial_state.terminal:
            self.add(
                "TERMINAL_INITIAL_STATE",
                f"state {d.initial_state.name!r}",
                "the initial state is terminal, so no run could do anything",
                "start in a state with slots or moves",
            )
        for state in d.states:
            self.state(state)
        self.reachability()
        return self.found

    def state(self, st: State) -> None:
        where = f"state {st.name!r}"
        for route in st.routes:
            self.target(where, "a route", route.to)
            self.condition(where, f"the route to {route.to!r}", route.when, ("subject", "payload"))
        for move in st.moves:
            self.target(f"{where} / move {move.name!r}", "the move", move.to)
            mwhere = f"{where} / move {move.name!r}"
            self.condition(mwhere, "the guard", move.guard, ("subject", "payload", "principal"))
            for pre in move.preconditions:
                self.condition(
                    mwhere,
                    f"precondition {pre.name!r}",
                    pre.when,
                    ("subject", "payload", "principal"),
                )
            self.duplicates(mwhere, "precondition", (p.name for p in move.preconditions))
            self.who(mwhere, "who may make it", move.by, ("subject",), ())
            self.fields(mwhere, move.fields)
        for pre in st.preconditions:
            self.condition(
                where, f"precondition {pre.name!r}", pre.when, ("subject", "payload", "principal")
            )
        for i, t in enumerate(st.timeouts):
            twhere = f"{where} / timeout {t.name or i + 1}"
            self.budget(twhere, "the timeout", t.after, ())
            if not t.actions:
                self.add(
                    "BAD_TIMEOUT",
                    twhere,
                    "the timeout does nothing",
                    "give it notify=... and/or move_to=...",
                )
            self.actions(twhere, t.actions, ("holder", "candidates", "anyone"))
        for target in st.redirects:
            self.target(where, "redirects", target)
        if st.redirects and st.on_enter is None:
            self.add(
                "BAD_HOOK",
                where,
                "redirects are declared but there is no enter hook",
                "add on_enter=<function> or drop redirects",
            )
        for hook, name in ((st.on_enter, "on_enter"), (st.on_exit, "on_exit")):
            if hook is not None and not callable(hook):
                self.add(
                    "BAD_HOOK",
                    where,
                    f"{name} is not callable",
                    f"give {name} a function taking a HookContext",
                )
        self.duplicates(where, "slot", (s.name for s in st.slots))
        self.duplicates(where, "move", (m.name for m in st.moves))
        self.duplicates(where, "timeout", (t.name for t in st.timeouts if t.name))
        self.duplicates(where, "precondition", (p.name for p in st.preconditions))
        if st.terminal:
            parts = [
                n
                for n, v in (
                    ("slots", st.slots),
                    ("moves", st.moves),
                    ("routes", st.routes),
                    ("timeouts", st.timeouts),
                )
                if v
            ]
            if parts:
                self.add(
                    "TERMINAL_WITH_WORK",
                    where,
                    f"a terminal state declares {', '.join(parts)}",
                    "remove them, or make the state non-terminal (terminal=False)",
                )
            return
        self.completion(where, st)
        self.routes(where, st)
        for slot in st.slots:
            self.slot(where, st, slot)
        self.after(where, st)

    def completion(self, where: str, st: State) -> None:
        done = st.completion
        if done.kind == "when":
            self.condition(where, "the completion rule", done.when, ("subject", "payload"))
        elif done.kind == "count":
            expandable = any(s.foreach is not None for s in st.slots)
            if done.count < 1 or (done.count > len(st.slots) and not expandable):
                self.add(
                    "BAD_COMPLETION",
                    where,
                    f"done=count({done.count}) but the state has {len(st.slots)} slots",
                    "count between 1 and the number of slots",
                )
        elif done.kind not in ("all", "any"):
            self.add(
                "BAD_COMPLETION",
                where,
                f"unknown completion rule {done.kind!r}",
                "use all_satisfied, any_satisfied, count(n) or a condition",
            )

    def routes(self, where: str, st: State) -> None:
        routes = st.routes
        for i, route in enumerate(routes[:-1]):
            if route.when is None:
                shadowed = ", ".join(r.to for r in routes[i + 1 :])
                self.add(
                    "ROUTE_SHADOWED",
                    where,
                    f"the unconditional route to {route.to!r} comes before the routes to "
                    f"{shadowed}, which can never be taken",
                    "put the route without a condition last, as the fallback",
                )
        other_exits = (
            any(st.moves)
            or any(a.target for t in st.timeouts for a in t.actions)
            or any(a.target for s in st.slots for r in s.reminders for a in r.actions)
        )
        has_fallback = any(r.when is None for r in routes)  # misplaced ones are reported above
        if routes and not has_fallback and not other_exits and not st.redirects:
            self.add(
                "NO_FALLBACK_ROUTE",
                where,
                "every route has a condition and there is no other way out: a run whose "
                "conditions are all false or unknown would be stuck",
                "add a last Route('<state>') without a condition, or a move or timeout",
            )
        if not st.exits():
            self.add(
                "NO_WAY_OUT",
                where,
                "the state is not terminal but has no way out",
                "add routes (then=[...]), a move, a timeout that moves, or mark it terminal=True",
            )

    def slot(self, where: str, st: State, slot: Slot) -> None:
        swhere = f"{where} / slot {slot.name!r}"
        roots = ("subject", "item") if slot.foreach is not None else ("subject",)
        if slot.foreach is not None and not (
            (isinstance(slot.foreach, ex.Ref) and slot.foreach.root == "subject")
            or (isinstance(slot.foreach, ex.Lit) and isinstance(slot.foreach.value, list))
        ):
            self.add(
                "BAD_FOREACH",
                swhere,
                f"foreach is {slot.foreach}",
                "give a subject path to a list (subject.documents) or a literal list",
            )
        self.fields(swhere, slot.fields)
        self.who(swhere, "candidates", slot.candidates, roots, ("anyone",))
        self.who(swhere, "delegates", slot.delegates, roots, ("anyone",))
        self.condition(swhere, "armed", slot.armed, (*roots, "payload"))
        if slot.label is not None:
            self.refs(swhere, "the label", labels.refs(slot.label), (*roots, "payload"))
        prio = slot.priority_rule
        if prio.key is not None:
            self.refs(swhere, "the priority", ex.refs(prio.key), roots)
        values = [prio.default, *(v for _, v in prio.table)]
        if prio.fixed is not None:
            values.append(prio.fixed)
        if any(v < 1 for v in values):
            self.add(
                "BAD_PRIORITY",
                swhere,
                "a priority is below 1",
                "use 1 for the most urgent, larger numbers for less urgent",
            )
        self.duplicates(swhere, "milestone", (m.kind for m in slot.milestones))
        for m in slot.milestones:
            if m.kind not in sla.MILESTONE_KINDS:
                self.add(
                    "BAD_MILESTONE",
                    swhere,
                    f"unknown milestone {m.kind!r}",
                    "use milestone.assigned(...) or milestone.finished(...)",
                )
            self.calendar(swhere, m.calendar)
            self.budget(swhere, f"the {m.kind} milestone's budget", m.within, roots)
        for i, rem in enumerate(slot.reminders):
            self.reminder(f"{swhere} / reminder {i + 1}", slot, rem)

    def actions(self, where: str, actions: Iterable[sla.Action], specials: Collection[str]) -> None:
        for a in actions:
            self.target(where, "a move action", a.target)
            self.who(where, f"the {a.kind} action", a.who, ("subject", "item"), specials)
            if a.kind == "raise_priority" and (a.priority is None or a.priority < 1):
                self.add(
                    "BAD_PRIORITY",
                    where,
                    f"raise_priority_to={a.priority}",
                    "raise to a priority of 1 or more (1 is the most urgent)",
                )

    def reminder(self, where: str, slot: Slot, rem: sla.Reminder) -> None:
        ms = slot.milestone(rem.milestone)
        if ms is None:
            declared = ", ".join(m.kind for m in slot.milestones) or "none"
            self.add(
                "UNKNOWN_MILESTONE",
                where,
                f"the reminder is scheduled off the "
                f"{rem.milestone!r} milestone, which the slot does not declare "
                f"(declared: {declared})",
                f"add milestone.{rem.milestone}(within=...) or change of=",
            )
        if not rem.actions:
            self.add(
                "BAD_REMINDER",
                where,
                "the reminder does nothing",
                "give it notify=, escalate_to=, reassign_to=, raise_priority_to= or move_to=",
            )
        self.actions(where, rem.actions, ("holder", "candidates", "anyone"))
        for label, offset in (("first", rem.first), ("until", rem.until)):
            if isinstance(offset, float) and offset <= 0:
                self.add(
                    "BAD_REMINDER",
                    where,
                    f"{label} is at {offset:.0%} of the budget",
                    "use a fraction above 0 (0.75 is 75 %, 1.0 is the breach)",
                )
            elif isinstance(offset, bu.Budget):
                self.budget(where, f"the reminder's {label} offset", offset, ())
        if rem.every is not None:
            self.budget(where, "the reminder's interval", rem.every, ())
        if rem.times is not None and rem.times < 1:
            self.add(
                "BAD_REMINDER", where, f"times={rem.times}", "fire at least once, or drop times="
            )
        if rem.until is not None:
            budget = ms.within if ms is not None and isinstance(ms.within, bu.Budget) else None
            first, until = _seconds(rem.first, budget), _seconds(rem.until, budget)
            if (
                first is not None
                and until is not None
                and first[0] == until[0]
                and until[1] < first[1]
            ):
                self.add(
                    "REMINDER_AFTER_UNTIL",
                    where,
                    f"the reminder first fires at {_offset(rem.first)}, after its own until "
                    f"({_offset(rem.until)}), so it would never fire",
                    "move until= later than the first firing, or drop it",
                )

    def after(self, where: str, st: State) -> None:
        siblings = {s.name: s.after for s in st.slots}
        for slot in st.slots:
            for name in slot.after:
                if name == slot.name:
                    self.add(
                        "AFTER_CYCLE",
                        f"{where} / slot {slot.name!r}",
                        "the slot waits for itself",
                        "remove its own name from after=",
                    )
                elif name not in siblings:
                    self.add(
                        "UNKNOWN_SIBLING",
                        f"{where} / slot {slot.name!r}",
                        f"after names {name!r}, which is not a slot of this state",
                        f"use one of: {', '.join(sorted(siblings))}",
                    )
        cycle = _find_cycle(siblings)
        if cycle:
            self.add(
                "AFTER_CYCLE",
                where,
                "slots wait for each other: " + " -> ".join(cycle),
                "break the cycle: one of them must not wait for the other",
            )

    def reachability(self) -> None:
        exits = {s.name: s.exits() for s in self.d.states}
        seen, todo = set(), [self.d.initial_state.name]
        while todo:
            name = todo.pop()
            if name in seen or name not in exits:
                continue
            seen.add(name)
            todo.extend(exits[name])
        for st in self.d.states:
            if st.name not in seen:
                self.add(
                    "UNREACHABLE_STATE",
                    f"state {st.name!r}",
                    f"no route, move, timeout or redirect leads to it from "
                    f"{self.d.initial_state.name!r}",
                    "add a route or move to it, or remove it",
                )


def _offset(offset: sla.Offset) -> str:
    return f"{offset:.0%} of the budget" if isinstance(offset, float) else str(offset)


def _seconds(offset: sla.Offset | None, budget: bu.Budget | None) -> tuple[str, float] | None:
    """An offset as (clock kind, seconds) when that can be known at load time."""
    if isinstance(offset, float):
        return None if budget is None else (budget.kind, offset * _budget_seconds(budget))
    if offset is None:
        return None
    return offset.kind, _budget_seconds(offset)


def _budget_seconds(b: bu.Budget) -> float:
    unit = {"minutes": 60.0, "hours": 3600.0}.get(b.unit)
    if unit is None:  # days: a business day is a working day, a real day 24 hours
        unit = _DAY_LENGTH_SECONDS if b.kind == "business" else 86400.0
    return b.amount * unit


def _find_cycle(graph: Mapping[str, Collection[str]]) -> list[str]:
    """One cycle in ``graph`` (excluding self-loops, reported apart) as a path, or []."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str]:
        state[node] = 1
        stack.append(node)
        for nxt in graph.get(node, ()):
            if nxt == node or nxt not in graph:
                continue
            if state.get(nxt) == 1:
                return [*stack[stack.index(nxt) :], nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        state[node] = 2
        stack.pop()
        return []

    for node in graph:
        if node not in state and (found := visit(node)):
            return found
    return []


def problems(
    definition: Definition, known_calendars: Collection[str] | None = None
) -> list[Problem]:
    """Every problem in ``definition``; ``known_calendars`` None skips the calendar check."""
    return _Checker(definition, known_calendars).run()


def validate(definition: Definition, known_calendars: Collection[str] | None = None) -> Definition:
    """``definition`` itself when sound, else :class:`DefinitionError` listing every problem."""
    found = problems(definition, known_calendars)
    if found:
        raise DefinitionError(found)
    return definition
