"""The parts of a workflow definition: states, slots, routes, moves, completion rules.

Every part is an immutable value, so a definition can be validated, rendered
to JSON, compared by digest and explained. Lists given by the author are kept
as tuples. Python callables appear only as enter/exit hooks and as the actions of
automatic steps (run by the worker, never by the engine).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import KW_ONLY, dataclass, field
from datetime import datetime
from typing import Any, Final, TypeVar

from taskflow.core.definition import actors, retries, sla
from taskflow.core.definition import audience as au
from taskflow.core.definition import children as ch
from taskflow.core.definition import fields as fl
from taskflow.core.definition import steps as st
from taskflow.core.definition import undoing as un
from taskflow.core.definition.checks import problems
from taskflow.core.definition.conditions import expr as ex
from taskflow.core.definition.conditions import expr_data as exd
from taskflow.core.definition.timing_rules import expiry


def _tuple(obj: object, name: str, value: Any) -> None:
    """Store ``value`` as a tuple on a frozen dataclass (authors may pass lists)."""
    object.__setattr__(obj, name, tuple(value) if value is not None else ())


@dataclass(frozen=True, eq=False)
class Completion:
    """When a state is done: ``all`` / ``any`` slots satisfied, a ``count``, or a condition."""

    kind: str
    count: int = 0
    when: ex.Expr | None = None

    def describe(self) -> str:
        """``all slots satisfied``, ``2 slots satisfied``, ``when <condition>``."""
        if self.kind == "when":
            return f"when {ex.describe(self.when)}"
        if self.kind == "count":
            return f"{self.count} slots satisfied"
        return f"{self.kind} slots satisfied"

    def to_json(self) -> Any:
        """``{"kind": "all"}``, ``{"kind": "count", "count": 2}`` or ``{"kind": "when", ...}``."""
        doc: dict[str, Any] = {"kind": self.kind}
        if self.kind == "count":
            doc["count"] = self.count
        if self.when is not None:
            doc["when"] = exd.to_json(self.when)
        return doc


#: Done when every live slot of the state is satisfied (a state with no slots is done at once).
all_satisfied: Final = Completion("all")
#: Done when any slot of the state is satisfied.
any_satisfied: Final = Completion("any")


def count(n: int) -> Completion:
    """Done when ``n`` slots are satisfied (e.g. two approvals out of three)."""
    return Completion("count", count=n)


@dataclass(frozen=True, eq=False)
class Route:
    """Go to state ``to`` when ``when`` holds (None: always; the fallback, declared last)."""

    to: str
    when: ex.Expr | None = None

    def to_json(self) -> Any:
        """``{"to", "when"}``."""
        return {"to": self.to, "when": exd.to_json(self.when) if self.when is not None else None}


@dataclass(frozen=True, eq=False)
class Precondition:
    """A named checklist item: ``Precondition("receipts attached", subject.receipts > 0)``."""

    name: str
    when: ex.Expr

    def to_json(self) -> Any:
        """``{"name", "when"}``."""
        return {"name": self.name, "when": exd.to_json(self.when)}


@dataclass(frozen=True, eq=False)
class Move:
    """A named manual transition to ``to``, allowed when ``guard`` and every precondition hold.

    ``by`` says who may make it (None: anyone who may read the run);
    ``fields`` are the input it takes.
    """

    name: str
    to: str
    _: KW_ONLY
    guard: ex.Expr | None = None
    preconditions: Sequence[Precondition] = ()
    by: au.Who | None = None
    fields: Sequence[fl.Field] = ()
    label: str | None = None
    #: May be undone after it moved the run (docs/history.md, "Undo").
    undoable: un.Undoable | None = None

    def __post_init__(self) -> None:
        _tuple(self, "preconditions", self.preconditions)
        _tuple(self, "fields", self.fields)

    def to_json(self) -> Any:
        """``{"name", "to", "label", "guard", "preconditions", "by", "fields"}``."""
        return {
            "name": self.name,
            "to": self.to,
            "label": self.label,
            "guard": exd.to_json(self.guard) if self.guard is not None else None,
            "preconditions": [p.to_json() for p in self.preconditions],
            "by": au.to_json(self.by) if self.by is not None else None,
            "fields": [f.to_json() for f in self.fields],
        } | ({"undoable": self.undoable.to_json()} if self.undoable is not None else {})


Named = TypeVar("Named", "Slot", "Move")


@dataclass(frozen=True, eq=False)
class Slot:
    """A wait for one event in one state: a human task (see docs/definitions.md, "Slots").

    ``waits_for`` defaults to the slot's name. ``foreach`` is a subject path to a
    list or a literal list: one slot per element, the element readable as
    ``item``. ``shareable`` names the subject fields an outsider completing it
    by magic link may see; a link goes only to an address the candidates name
    (``who.email(...)``) or one ``outsiders`` admits (``who.email(...)`` terms,
    or ``who.anyone()`` for any address).
    """

    name: str
    _: KW_ONLY
    waits_for: str = ""
    label: str | None = None
    fields: Sequence[fl.Field] = ()
    candidates: au.Who | None = None
    delegates: au.Who | None = None
    armed: ex.Expr | None = None
    after: Sequence[str] = ()
    foreach: ex.Expr | Sequence[Any] | None = None
    priority: int | ex.Expr | sla.Priority | None = None
    milestones: Sequence[sla.Milestone] = ()
    reminders: Sequence[sla.Reminder] = ()
    magic_link: bool = False
    shareable: Sequence[str] = ()
    description: str | None = None
    outsiders: au.Who | None = None
    #: When the slot expires (closes with the outcome ``expired``), if ever.
    expires: expiry.Expire | None = None

    def __post_init__(self) -> None:
        if not self.waits_for:
            object.__setattr__(self, "waits_for", self.name)
        for name in ("fields", "after", "milestones", "reminders", "shareable"):
            _tuple(self, name, getattr(self, name))
        if self.foreach is not None and not isinstance(self.foreach, ex.Expr):
            object.__setattr__(self, "foreach", ex.lift(list(self.foreach)))
        object.__setattr__(self, "priority", sla.as_priority(self.priority))

    @property
    def foreach_expr(self) -> ex.Expr | None:
        """The normalised ``foreach`` (a literal list becomes a literal expression)."""
        assert self.foreach is None or isinstance(self.foreach, ex.Expr)
        return self.foreach

    @property
    def priority_rule(self) -> sla.Priority:
        """The normalised priority (always a :class:`~taskflow.core.definition.sla.Priority`)."""
        assert isinstance(self.priority, sla.Priority)
        return self.priority

    def milestone(self, kind: str) -> sla.Milestone | None:
        """The ``assigned`` or ``finished`` milestone, if declared."""
        return next((m for m in self.milestones if m.kind == kind), None)


@dataclass(frozen=True)
class HookContext:
    """What an enter/exit hook is given. Hooks must not do slow I/O: they run in the transaction."""

    workflow: str
    state: str
    subject: Mapping[str, Any]
    payload: Mapping[str, Any] = field(default_factory=dict)
    run_id: str | None = None
    now: datetime | None = None
    #: Who acted (``ctx.actor.login``, ``ctx.actor.roles``; ``core/definition/actors.py``).
    actor: actors.Actor = actors.SYSTEM_ACTOR


#: An enter hook may return the name of a state to redirect to (declared in ``redirects``).
EnterHook = Callable[[HookContext], str | None]
#: An exit hook runs as the run leaves; it cannot redirect.
ExitHook = Callable[[HookContext], None]

RouteLike = str | Route


@dataclass(frozen=True, eq=False)
class State:
    """A state of a workflow (see docs/definitions.md, "States").

    ``done`` is the completion rule (default :data:`all_satisfied`; a condition
    is accepted as is) and ``then`` the ordered routes taken when it holds (a
    state name is a route without condition). ``redirects`` lists the states
    the enter hook may send the run to.

    ``pausing`` stops every SLA clock of the run while it sits here, and
    *holds* the state it came from rather than leaving it: that state's open
    and claimed slots keep their holders and (paused) clocks, and resume when
    the run returns there; moving anywhere else from the pausing state cancels
    them. ``preconditions`` apply to every move of the state.

    An *automatic* state has an ``action`` (docs/automatic-steps.md): the worker
    runs it with the ``retry`` policy, then takes the first matching
    ``on_success`` route (which may read ``result.<state>``), or after the last
    failed attempt the first ``on_error`` route matching the error's class.
    ``every`` lists recurring work run while the run stays in the state. A state
    with slots and an ``action`` runs the action on entry beside its slots and
    does not wait for it (its routes are ``then``, as for any state with slots).
    """

    _: KW_ONLY
    name: str = ""
    initial: bool = False
    terminal: bool = False
    pausing: bool = False
    slots: Sequence[Slot] = ()
    done: Completion | ex.Expr | None = None
    then: RouteLike | Sequence[RouteLike] = ()
    moves: Sequence[Move] = ()
    timeouts: Sequence[sla.Timeout] = ()
    preconditions: Sequence[Precondition] = ()
    on_enter: EnterHook | None = None
    on_exit: ExitHook | None = None
    redirects: Sequence[str] = ()
    label: str | None = None
    description: str | None = None
    action: st.ActionLike | None = None
    on_success: RouteLike | Sequence[RouteLike] = ()
    on_error: Sequence[st.OnError] = ()
    retry: retries.Policy | None = None
    every: Sequence[st.Every] = ()
    #: Child runs started on entry (docs/composition.md); awaited ones park the state.
    children: Sequence[ch.Child] = ()
    #: First to finish wins (docs/composition.md, "Parallel steps"): the state's routes are
    #: taken when one awaited child ends well; the rest are cancelled (saga steps among them
    #: that completed are compensated). A failure raises only once none is left to win.
    await_first: bool = False
    #: Routes taken when an awaited child fails (by failure kind).
    catch: Sequence[ch.Catch] = ()
    #: On a terminal state: reaching it is a failure of this kind (True: ``failed``).
    failure: str | bool | None = None
    #: The completion that routed the run out of this state may be undone (docs/history.md).
    undoable: un.Undoable | None = None

    def __post_init__(self) -> None:
        for name in ("then", "on_success"):
            value = getattr(self, name)
            listed = [value] if isinstance(value, str | Route) else list(value)
            object.__setattr__(
                self, name, tuple(Route(r) if isinstance(r, str) else r for r in listed)
            )
        for name in ("slots", "moves", "timeouts", "preconditions", "redirects", "on_error"):
            _tuple(self, name, getattr(self, name))
        _tuple(self, "every", self.every)
        _tuple(self, "children", self.children)
        _tuple(self, "catch", self.catch)
        if self.done is None:
            object.__setattr__(self, "done", all_satisfied)
        elif isinstance(self.done, ex.Expr):
            object.__setattr__(self, "done", Completion("when", when=self.done))

    @property
    def routes(self) -> tuple[Route, ...]:
        """The routes, in order (normalised ``then``)."""
        assert isinstance(self.then, tuple)
        return self.then

    @property
    def success_routes(self) -> tuple[Route, ...]:
        """The normalised ``on_success`` routes of an automatic state, in order."""
        assert isinstance(self.on_success, tuple)
        return self.on_success

    @property
    def action_path(self) -> str | None:
        """The import path of the state's action (None: not automatic)."""
        return st.action_path(self.action)

    @property
    def automatic(self) -> bool:
        """True when the state runs an action and waits for it (an action and no slots)."""
        return self.action is not None and not self.slots

    @property
    def awaits(self) -> tuple[str, ...]:
        """The labels of the awaited children: the state waits until each has ended."""
        return tuple(c.label for c in self.children if c.awaited)

    @property
    def entry_action(self) -> bool:
        """True when the state runs an action on entry beside its slots (it does not wait)."""
        return self.action is not None and bool(self.slots)

    @property
    def policy(self) -> retries.Policy:
        """The retry policy (one attempt when none is declared)."""
        return self.retry if self.retry is not None else retries.ONCE

    @property
    def completion(self) -> Completion:
        """The normalised completion rule."""
        assert isinstance(self.done, Completion)
        return self.done

    def slot(self, name: str) -> Slot:
        """The slot called ``name``; ``UnknownSlot`` (a KeyError) if none."""
        return self._named(self.slots, name, problems.UnknownSlot, "slot", f"{name!r} in it")

    def move(self, name: str) -> Move:
        """The move called ``name``; ``UnknownMove`` (a KeyError) if none."""
        return self._named(self.moves, name, problems.UnknownMove, "move", f"Move({name!r}, ...)")

    def _named(
        self,
        items: Sequence[Named],
        name: str,
        error: type[problems.DefinitionMistake],
        what: str,
        declare: str,
    ) -> Named:
        for item in items:
            if item.name == name:
                return item
        known = ", ".join(i.name for i in items) or "none"
        raise error(
            f"state {self.name!r} has no {what} {name!r}",
            where=f"state {self.name}",
            fix=f"use one of its {what}s ({known}) or declare {declare}",
        )

    def exits(self) -> tuple[str, ...]:
        """Every state this one can lead to: routes, moves, timeouts, reminders, redirects."""
        targets = [r.to for r in self.routes] + [m.to for m in self.moves]
        targets += [r.to for r in self.success_routes] + [e.to for e in self.on_error]
        targets += [c.to for c in self.catch]
        targets += [a.target for t in self.timeouts for a in t.actions if a.target]
        reminders = (r for s in self.slots for r in s.reminders)
        targets += [a.target for r in reminders for a in r.actions if a.target]
        return tuple(dict.fromkeys([*targets, *self.redirects]))
