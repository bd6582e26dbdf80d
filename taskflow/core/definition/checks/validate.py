"""Load-time checks of a definition: every problem is found and reported at once.

Each problem names the workflow, the state (and slot) and the fix; the codes
are listed in docs/definitions.md ("Validation").
"""

from __future__ import annotations

import re
from collections.abc import Collection
from typing import Final

from taskflow.core.definition import budgets as bu
from taskflow.core.definition import events as ev
from taskflow.core.definition import owning
from taskflow.core.definition.checks import (
    child_checks,
    deadline_checks,
    migration_checks,
    step_checks,
)
from taskflow.core.definition.checks.problems import DefinitionError, Problem
from taskflow.core.definition.checks.slot_checks import SlotChecker
from taskflow.core.definition.conditions import expr as ex
from taskflow.core.definition.model import State
from taskflow.core.definition.workflow import Definition
from taskflow.core.operate import retention

_NAME: Final = re.compile(r"^[a-z][a-z0-9_-]*$")
#: What routes and completion rules may read (``result``: what automatic steps returned;
#: ``child``: how child runs ended; ``actor``: who acted; ``expired``: how often each slot
#: expired, docs/sla.md "Expiry").
ROUTE_ROOTS: Final = ("subject", "payload", "result", "child", "actor", "expired")
#: What move guards and preconditions may read.
GUARD_ROOTS: Final = ("subject", "payload", "principal", "actor")


class _Checker(SlotChecker):
    """Checks of the workflow as a whole and of each state."""

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
        if d.retention is not None and not retention.valid(d.retention):
            self.add(
                "BAD_RETENTION",
                "retention",
                f"retention {d.retention!r} is not a real duration of at least a day",
                "write retention = real.days(90) (or leave it out for TASKFLOW_RETENTION_DAYS)",
            )
        if d.subject_gone is not None and not (
            d.has_state(d.subject_gone) and d.state(d.subject_gone).terminal
        ):
            self.add(
                "BAD_SUBJECT_GONE",
                "subject_gone",
                f"subject_gone names {d.subject_gone!r}, which is not a terminal state",
                "name a terminal state (e.g. withdrawn), or leave it out to cancel the runs",
            )
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
            step_checks.state(self, state)
        self.reachability()
        self.events()
        deadline_checks.check(self)
        return self.found

    def events(self) -> None:
        """Each declared event: one a slot waits for, with sound raisers and buffer."""
        waited = {sl.waits_for for _, sl in self.d.slots()}
        self.duplicates("events", "event", (e.name for e in self.d.events))
        for event in self.d.events:
            where = f"event {event.name!r}"
            if not isinstance(event, ev.Event):
                self.add(
                    "BAD_EVENT",
                    "events",
                    f"{event!r} is not an event",
                    "declare events = [Event('<name>', raisers=..., buffer=...)]",
                )
                continue
            if event.name not in waited:
                self.add(
                    "UNKNOWN_EVENT",
                    where,
                    f"no slot waits for {event.name!r}",
                    f"use an event a slot waits for: {', '.join(sorted(waited)) or 'none'}",
                )
            self.who(where, "raisers", event.raisers, ("subject",), ("anyone",))
            self.buffer(where, event.buffer)

    def buffer(self, where: str, buffer: ev.Buffer | None) -> None:
        if buffer is None:
            return
        if not isinstance(buffer, ev.Buffer):
            self.add(
                "BAD_BUFFER",
                where,
                f"buffer is {buffer!r}",
                "write buffer=Buffer(max=10, for_=real.days(7))",
            )
            return
        if not isinstance(buffer.max, int) or isinstance(buffer.max, bool) or buffer.max < 1:
            self.add(
                "BAD_BUFFER",
                where,
                f"the buffer keeps max={buffer.max!r} events",
                "keep at least 1 (max=10 keeps ten early events per run)",
            )
        if not isinstance(buffer.for_, bu.Budget) or buffer.for_.kind != "real":
            self.add(
                "BAD_BUFFER",
                where,
                f"the buffer keeps events for {buffer.for_!r}",
                "give real time, e.g. for_=real.days(7) (business time is not known per event)",
            )
        elif not buffer.for_.amount > 0:
            self.add(
                "BAD_BUFFER",
                where,
                f"the buffer keeps events for {buffer.for_}",
                "keep them for more than zero time, e.g. for_=real.days(7)",
            )

    def state(self, st: State) -> None:
        where = f"state {st.name!r}"
        for route in st.routes:
            self.target(where, "a route", route.to)
            self.condition(where, f"the route to {route.to!r}", route.when, ROUTE_ROOTS)
        for catch in st.catch:
            self.condition(where, f"the catch to {catch.to!r}", catch.when, ROUTE_ROOTS)
        for move in st.moves:
            self.target(f"{where} / move {move.name!r}", "the move", move.to)
            mwhere = f"{where} / move {move.name!r}"
            self.condition(mwhere, "the guard", move.guard, GUARD_ROOTS)
            for pre in move.preconditions:
                self.condition(
                    mwhere,
                    f"precondition {pre.name!r}",
                    pre.when,
                    GUARD_ROOTS,
                )
            self.duplicates(mwhere, "precondition", (p.name for p in move.preconditions))
            self.who(mwhere, "who may make it", move.by, ("subject",), ())
            self.fields(mwhere, move.fields)
        for pre in st.preconditions:
            self.condition(where, f"precondition {pre.name!r}", pre.when, GUARD_ROOTS)
        for i, t in enumerate(st.timeouts):
            twhere = f"{where} / timeout {t.name or i + 1}"
            self.budget(twhere, "the timeout", t.after, ())
            fix = "give it notify=... and/or move_to=..."
            self.actions(twhere, t.actions, "BAD_TIMEOUT", "the timeout", fix)
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
            self.condition(where, "the completion rule", done.when, ROUTE_ROOTS)
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
        if not st.exits() and not st.automatic:  # an automatic one: NO_SUCCESS_ROUTE
            self.add(
                "NO_WAY_OUT",
                where,
                "the state is not terminal but has no way out",
                "add routes (then=[...]), a move, a timeout that moves, or mark it terminal=True",
            )

    def reachability(self) -> None:
        exits = {s.name: s.exits() for s in self.d.states}
        # The state a deleted subject's runs go to is reached from every state.
        seen, todo = set(), [self.d.initial_state.name, *filter(None, [self.d.subject_gone])]
        # The run deadline's move leads there from wherever the run is.
        rule = self.d.deadline
        todo += [a.target for a in getattr(rule, "on_breach", ()) if a.kind == "move" and a.target]
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
                    f"no route, move, timeout, redirect or deadline leads to it from "
                    f"{self.d.initial_state.name!r}",
                    "add a route or move to it, or remove it",
                )


def problems(
    definition: Definition, known_calendars: Collection[str] | None = None
) -> list[Problem]:
    """Every problem in ``definition``; ``known_calendars`` None skips the calendar check."""
    return (
        _Checker(definition, known_calendars).run()
        + migration_checks.problems(definition)
        + child_checks.problems(definition)
        + owning.problems(definition)
    )


def validate(definition: Definition, known_calendars: Collection[str] | None = None) -> Definition:
    """``definition`` itself when sound, else :class:`DefinitionError` listing every problem."""
    found = problems(definition, known_calendars)
    if found:
        raise DefinitionError(found)
    return definition
