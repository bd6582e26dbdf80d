"""The shared machinery of definition checks: collecting problems, and checks used everywhere.

:mod:`.validate` is the entry point; :mod:`.slot_checks` checks slots.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from types import UnionType

from taskflow.core.definition import audience as au
from taskflow.core.definition import budgets as bu
from taskflow.core.definition import fields as fl
from taskflow.core.definition.checks.problems import Problem
from taskflow.core.definition.conditions import expr as ex
from taskflow.core.definition.conditions import expr_data as exd
from taskflow.core.definition.workflow import Definition


class Checker:
    """Collects the problems of one definition; subclasses add checks by part."""

    def __init__(self, definition: Definition, known_calendars: Collection[str] | None) -> None:
        self.d = definition
        self.calendars = known_calendars
        self.found: list[Problem] = []
        self.state_names = {s.name for s in definition.states}
        self.slot_fields = {sl.name: {f.name for f in sl.fields} for _, sl in definition.slots()}

    def add(self, code: str, where: str, message: str, fix: str) -> None:
        self.found.append(Problem(code, self.d.name, where, message, fix, self.d.source))

    # -- shared checks --------------------------------------------------------------------------

    def is_a(
        self,
        where: str,
        what: str,
        value: object,
        kind: type | UnionType,
        code: str,
        noun: str,
        fix: str,
    ) -> bool:
        """True when ``value`` is a ``kind``, else the problem: {what} is {value!r}, not {noun}."""
        if isinstance(value, kind):
            return True
        self.add(code, where, f"{what} is {value!r}, not {noun}", fix)
        return False

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
        fix = "build it from subject, payload, principal or item, e.g. subject.amount > 1000"
        # e.g. a lambda, or a plain True
        if cond is None or not self.is_a(
            where, what, cond, ex.Expr, "BAD_CONDITION", "a condition", fix
        ):
            return
        self.refs(where, what, exd.refs(cond), roots)

    def who(
        self,
        where: str,
        what: str,
        w: au.Who | None,
        roots: Collection[str],
        specials: Collection[str],
    ) -> None:
        fix = "build it with who.role(...), who.id(...), who.group(...), who.attr(...)"
        # e.g. candidates="finance"
        if w is None or not self.is_a(where, what, w, au.Who, "BAD_AUDIENCE", "an audience", fix):
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
        fix = "write business.hours(4), business.days(2), real.hours(1) or budget_by(...)"
        if not self.is_a(
            where, what, budget, bu.Budget | bu.BudgetTable, "BAD_BUDGET", "a budget", fix
        ):
            return
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
            self.refs(where, what, exd.refs(budget.key), roots)

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
