"""Who may act, as expressions: ``who.role("finance") - who.id(subject.submitted_by)``.

One expression surface serves candidates, delegates, move permissions and
reminder recipients. ``|`` is union, ``&`` intersection, ``-`` exclusion.
Their compiled form (audience keys and residual rules) is in
:mod:`taskflow.core.definition.audience`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Final

from taskflow.core.definition.checks import problems
from taskflow.core.definition.conditions import expr as ex
from taskflow.core.definition.conditions import expr_data as exd


class Who:
    """Base of audience expressions: ``|`` union, ``&`` intersection, ``-`` exclusion."""

    def __or__(self, other: Who) -> Who:
        return Combine("or", (self, _who(other)))

    def __and__(self, other: Who) -> Who:
        return Combine("and", (self, _who(other)))

    def __sub__(self, other: Who) -> Who:
        return Combine("and", (self, Combine("not", (_who(other),))))

    def __str__(self) -> str:
        return describe(self)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {describe(self)}>"


def _who(value: object) -> Who:
    if not isinstance(value, Who):
        raise problems.NotAnAudience(
            f"{value!r} is not an audience",
            fix="use who.id(...), who.role(...), who.group(...), ... (combined with | & ~)",
        )
    return value


@dataclass(frozen=True, eq=False, repr=False)
class Key(Who):
    """A principal by id, a role, a group, an address: ``kind`` is user/role/group/email.

    ``value`` is text or a path. ``name`` (e-mail only) is how to address an
    outsider, read from the subject when a notification is written.
    """

    kind: str
    value: ex.Expr
    name: ex.Expr | None = None


@dataclass(frozen=True, eq=False, repr=False)
class AttrRule(Who):
    """Principals whose attribute ``name`` equals one of ``values`` (literals or paths)."""

    name: str
    values: tuple[ex.Expr, ...]


@dataclass(frozen=True, eq=False, repr=False)
class Special(Who):
    """``anyone``, ``holder`` (the slot's current holder) or ``candidates`` (the slot's)."""

    kind: str


@dataclass(frozen=True, eq=False, repr=False)
class Combine(Who):
    """``or`` / ``and`` of audiences, or ``not`` of one (only meaningful inside ``-``)."""

    op: str
    args: tuple[Who, ...]


@dataclass(frozen=True)
class _Attr:
    """``who.attr("region")``: compare with ``==`` or ``is_in`` to get an audience."""

    name: str

    def __eq__(self, other: object) -> AttrRule:  # type: ignore[override]
        return AttrRule(self.name, (ex.lift(other),))

    def __hash__(self) -> int:
        return hash(self.name)

    def is_in(self, values: Iterable[Any]) -> AttrRule:
        return AttrRule(self.name, tuple(ex.lift(v) for v in values))


class _WhoFactory:
    """The ``who`` namespace of the DSL."""

    def id(self, value: str | ex.Expr) -> Who:
        """The principal with this id (text, or a path such as ``subject.manager_id``)."""
        return Key("user", ex.lift(value))

    def role(self, value: str | ex.Expr) -> Who:
        """Every principal holding this role."""
        return Key("role", ex.lift(value))

    def group(self, value: str | ex.Expr) -> Who:
        """Every member of this group (text, or a path such as ``subject.team``)."""
        return Key("group", ex.lift(value))

    def email(self, value: str | ex.Expr, *, name: str | ex.Expr | None = None) -> Who:
        """Whoever has this e-mail address: an outsider (vendor, customer) reached by link.

        ``name`` (text or a path such as ``subject.contact_name``) is how notifications
        and links address them; a missing value leaves them unnamed.
        """
        return Key("email", ex.lift(value), ex.lift(name) if name is not None else None)

    def attr(self, name: str) -> _Attr:
        """A principal attribute, to compare: ``who.attr("region") == subject.region``."""
        return _Attr(name)

    def anyone(self) -> Who:
        """Every known principal."""
        return Special("anyone")

    def holder(self) -> Who:
        """Whoever holds the slot now (for reminders and notifications)."""
        return Special("holder")

    def candidates(self) -> Who:
        """The slot's own candidates (for reminders and notifications)."""
        return Special("candidates")


who: Final = _WhoFactory()


def describe(w: Who, parent: int = 0) -> str:
    """A human reading: ``role:finance and not user:{subject.submitted_by}``."""
    if isinstance(w, Key):
        return f"{w.kind}:{_describe_value(w.value)}"
    if isinstance(w, AttrRule):
        values = ", ".join(_describe_value(v) for v in w.values)
        return f"attr:{w.name}=" + (values if len(w.values) == 1 else "(" + values + ")")
    if isinstance(w, Special):
        return w.kind
    assert isinstance(w, Combine)
    if w.op == "not":
        return "not " + describe(w.args[0], 3)
    level = 1 if w.op == "or" else 2
    text = f" {w.op} ".join(describe(a, 3) for a in w.args)
    return f"({text})" if level < parent else text


def _describe_value(value: ex.Expr) -> str:
    if isinstance(value, ex.Lit):
        return key_text(value.value)
    return "{" + ex.describe(value) + "}"


def to_json(w: Who) -> Any:
    """JSON form: ``{"user": <expr>}``, ``{"attr": name, "in": [...]}``, ``{"or": [...]}``..."""
    if isinstance(w, Key):
        if w.name is not None:
            return {w.kind: exd.to_json(w.value), "name": exd.to_json(w.name)}
        return {w.kind: exd.to_json(w.value)}
    if isinstance(w, AttrRule):
        return {"attr": w.name, "in": [exd.to_json(v) for v in w.values]}
    if isinstance(w, Special):
        return {"special": w.kind}
    assert isinstance(w, Combine)
    return {w.op: [to_json(a) for a in w.args]}


def refs(w: Who) -> tuple[ex.Ref, ...]:
    """Every path the audience reads (for validation and for the SLA's subject dependencies)."""
    if isinstance(w, Key):
        return exd.refs(w.value) + (exd.refs(w.name) if w.name is not None else ())
    if isinstance(w, AttrRule):
        return tuple(r for v in w.values for r in exd.refs(v))
    if isinstance(w, Combine):
        return tuple(r for a in w.args for r in refs(a))
    return ()


def emails(w: Who) -> tuple[Key, ...]:
    """The ``who.email(...)`` terms of an audience (outsiders it may reach), in order."""
    if isinstance(w, Key):
        return (w,) if w.kind == "email" else ()
    if isinstance(w, Combine) and w.op != "not":
        return tuple(k for a in w.args for k in emails(a))
    return ()


def exclusions(w: Who) -> tuple[Who, ...]:
    """What ``w`` excludes from all of itself: each ``- x`` among its top-level conjuncts
    (``a - x - y``, ``a & (b - x)``), as the ``not x`` terms; an exclusion inside an
    ``|`` branch narrows only that branch and is not listed."""
    if isinstance(w, Combine):
        if w.op == "not":
            return (w,)
        if w.op == "and":
            return tuple(e for a in w.args for e in exclusions(a))
    return ()


def keeping_exclusions(w: Who, base: Who | None) -> Who:
    """``w`` minus everything ``base`` excludes outright (see :func:`exclusions`)."""
    for excluded in exclusions(base) if base is not None else ():
        w = Combine("and", (w, excluded))
    return w


def widen(base: Who | None, extra: Who) -> Who:
    """``base | extra`` that keeps every exclusion of ``base`` over the whole widened rule.

    ``widen(who.role("finance") - who.id(subject.submitted_by), who.role("finance-lead"))``
    is ``(finance | finance-lead) - submitter``: an escalation never lets in the person
    the rule it widens keeps out (separation of duties).
    """
    if base is None:
        return extra
    return keeping_exclusions(base | extra, base)


def specials(w: Who) -> frozenset[str]:
    """The special terms used (``holder``, ``candidates``, ``anyone``)."""
    if isinstance(w, Special):
        return frozenset({w.kind})
    if isinstance(w, Combine):
        return frozenset().union(*(specials(a) for a in w.args))
    return frozenset()


def key_text(value: Any) -> str:
    """A value as it appears in a key; one function so slots and principals agree."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)
