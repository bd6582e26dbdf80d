"""A whole workflow: the authoring class :class:`Workflow` and the :class:`Definition` it builds.

Authors write a class; its body is read once, when the class is created, into
an immutable :class:`Definition` stored as ``cls.definition``. The engine only
ever sees definitions::

    class ExpenseApproval(Workflow):
        name = "expense-approval"
        version = 1
        tracks = "expense"
        calendar = "uk-london"
        correlate_by = subject.reference

        submitted = State(initial=True, slots=[...], then=[...])
        approved = State(terminal=True)

States are the class attributes holding a :class:`State`, in the order written;
the attribute name is the state's name.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any, ClassVar

from taskflow.core.definition.budgets import Budget
from taskflow.core.definition.checks import problems
from taskflow.core.definition.conditions import expr as ex
from taskflow.core.definition.events import Event
from taskflow.core.definition.migrations import Migration
from taskflow.core.definition.model import Slot, State
from taskflow.core.definition.owning import Owns
from taskflow.core.definition.timing_rules.deadline import Deadline


@dataclass(frozen=True, eq=False)
class Definition:
    """One version of a workflow, as data. Build it with :class:`Workflow` or :func:`define`."""

    name: str
    version: int
    tracks: str
    states: tuple[State, ...]
    calendar: str | None = None
    correlate_by: ex.Expr | None = None
    description: str | None = None
    #: Rules about inbound events: who may raise them, which wait when early.
    events: tuple[Event, ...] = ()
    #: Where it was written (``module.Class``), for error messages; not part of the digest.
    source: str = ""
    #: What happens to runs of earlier versions (``migrations.py``; docs/versions.md).
    migrations: tuple[Migration, ...] = ()
    #: How long ended runs are kept before the worker prunes them (a real duration, e.g.
    #: ``real.days(90)``); None: ``TASKFLOW_RETENTION_DAYS``. An operating setting: not in
    #: the document nor the digest, so changing it needs no new version.
    retention: Budget | None = None
    #: The result document a run of it hands its parent when it ends (name -> expression
    #: over ``subject``, ``payload``, ``result``; docs/composition.md).
    result: tuple[tuple[str, Any], ...] = ()
    #: The workflow owns the subjects it tracks (``owning.py``): a new subject starts a run,
    #: and the run's state shows on it as a read-only field. Like ``retention``, not in the
    #: document nor the digest: it is about the subject type, read from the latest version.
    owns: Owns | None = None
    #: A deadline on the whole run, across its states (``deadline.py``; docs/sla.md).
    deadline: Deadline | None = None
    #: Where a live run goes when its subject is deleted (``deleteSubject``): a terminal
    #: state; None: the run is cancelled with the reason ``subject-gone``.
    subject_gone: str | None = None

    def state(self, name: str) -> State:
        """The state called ``name``; ``UnknownState`` (a KeyError) if none."""
        for state in self.states:
            if state.name == name:
                return state
        known = ", ".join(s.name for s in self.states)
        raise problems.UnknownState(
            f"workflow {self.name!r} has no state {name!r} (it has {known})",
            workflow=self.name,
            where=f"state {name}",
            fix=f"use one of its states ({known}) or declare {name} = State(...)",
        )

    def event(self, name: str) -> Event | None:
        """The declared rules of event ``name``; None when the workflow declares none."""
        return next((e for e in self.events if e.name == name), None)

    def has_state(self, name: str) -> bool:
        """True when a state called ``name`` exists."""
        return any(s.name == name for s in self.states)

    @property
    def initial_state(self) -> State:
        """The state marked ``initial=True``, else the first declared."""
        return next((s for s in self.states if s.initial), self.states[0])

    def slot(self, state: str, slot: str) -> Slot:
        """The slot ``slot`` of state ``state``."""
        return self.state(state).slot(slot)

    def slots(self) -> tuple[tuple[State, Slot], ...]:
        """Every (state, slot) pair, in declaration order."""
        return tuple((st, sl) for st in self.states for sl in st.slots)

    @property
    def key(self) -> str:
        """``name@version``."""
        return f"{self.name}@{self.version}"

    def to_document(self) -> dict[str, Any]:
        """The plain JSON document (see :func:`taskflow.core.definition.render.document`)."""
        from taskflow.core.definition import render

        return render.document(self)

    @cached_property
    def digest(self) -> str:
        """``sha256:<hex>`` of the canonical JSON document: a run records it at start."""
        from taskflow.core.definition import render

        return render.digest(self)

    def __str__(self) -> str:
        return self.key


def define(
    name: str,
    *,
    tracks: str,
    states: Mapping[str, State],
    version: int = 1,
    calendar: str | None = None,
    correlate_by: ex.Expr | None = None,
    description: str | None = None,
    source: str = "",
    events: Sequence[Event] = (),
    migrations: Sequence[Migration] = (),
    retention: Budget | None = None,
    result: Mapping[str, Any] | None = None,
    owns: Owns | None = None,
    deadline: Deadline | None = None,
    subject_gone: str | None = None,
) -> Definition:
    """Build a :class:`Definition` from parts; each state takes the name it is keyed by."""
    return Definition(
        name=name,
        version=version,
        tracks=tracks,
        states=tuple(dataclasses.replace(s, name=n) for n, s in states.items()),
        calendar=calendar,
        correlate_by=correlate_by,
        description=description,
        source=source,
        events=tuple(events),
        migrations=tuple(migrations),
        retention=retention,
        result=tuple((result or {}).items()),
        owns=owns,
        deadline=deadline,
        subject_gone=subject_gone,
    )


def _kebab(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "-", name).lower()


class Workflow:
    """Base class of workflow definitions (see the module docs).

    Class attributes: ``name`` (default: the class name in kebab-case),
    ``version`` (default 1), ``tracks`` (the entity type), ``calendar`` (the
    default business calendar), ``correlate_by`` (a subject path inbound
    events may be matched by), ``events`` (rules about inbound events: who may
    raise them, which are buffered), ``migrations`` (what happens to runs of earlier
    versions: docs/versions.md), ``retention`` (how long ended runs are kept:
    docs/operations.md, "Retention"), ``result`` (the document a run hands its parent:
    docs/composition.md), ``owns`` (the workflow owns the subjects it tracks: started on
    each new one, its state shown on them; docs/composition.md), ``deadline`` (a deadline
    on the whole run: docs/sla.md, "Run deadlines"), and the states. The docstring is the
    description.
    each new one, its state shown on them; docs/composition.md), ``subject_gone`` (the
    terminal state a run goes to when its subject is deleted; default: cancelled,
    docs/runs-and-slots.md), and the states. The docstring is the description.
    """

    name: ClassVar[str] = ""
    version: ClassVar[int] = 1
    tracks: ClassVar[str] = ""
    calendar: ClassVar[str | None] = None
    correlate_by: ClassVar[ex.Expr | None] = None
    events: ClassVar[Sequence[Event]] = ()
    migrations: ClassVar[Sequence[Migration]] = ()
    retention: ClassVar[Budget | None] = None
    result: ClassVar[Mapping[str, Any] | None] = None
    owns: ClassVar[Owns | None] = None
    deadline: ClassVar[Deadline | None] = None
    subject_gone: ClassVar[str | None] = None
    #: The built definition; None for a base class that declares no states.
    definition: ClassVar[Definition | None] = None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        states: dict[str, State] = {}
        for klass in reversed(cls.__mro__):  # a base class's states come first
            states.update((k, v) for k, v in vars(klass).items() if isinstance(v, State))
        if not states:
            cls.definition = None
            return
        cls.definition = define(
            cls.name or _kebab(cls.__name__),
            version=cls.version,
            tracks=cls.tracks,
            states=states,
            calendar=cls.calendar,
            correlate_by=cls.correlate_by,
            events=tuple(cls.events),
            migrations=tuple(cls.migrations),
            retention=cls.retention,
            result=cls.result,
            owns=cls.owns,
            deadline=cls.deadline,
            subject_gone=cls.subject_gone,
            description=(cls.__doc__ or "").strip() or None,
            source=f"{cls.__module__}.{cls.__qualname__}",
        )
