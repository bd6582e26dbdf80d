"""Conditions: expressions over the subject, deposited payloads, the principal and a foreach item.

A definition never holds lambdas for its rules: ``subject.amount > 1000`` builds
a small tree that the engine can evaluate, render to JSON, show to people and
check when the definition loads. Four symbols start every path:

- ``subject``: the tracked entity's attributes (``subject.amount``);
- ``payload``: payloads deposited so far, per slot name (``payload.review.decision``);
- ``principal``: the acting principal (``principal.id``, ``principal.roles``);
- ``item``: the element of a ``foreach`` slot (``item`` or ``item.kind``).

Evaluation is three-valued, as in SQL: a missing (or null) field makes a
comparison *unknown* (``None``), ``&``/``|``/``~`` follow Kleene logic, and an
unknown condition does not match. Combine conditions with ``&``, ``|`` and
``~`` and parenthesise comparisons: ``(subject.amount > 1000) & subject.urgent``.
Python's ``and``/``or``/``not`` cannot be overloaded and are refused.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from taskflow.core.definition.checks import problems

ROOTS: Final = ("subject", "payload", "principal", "item", "result")
NO_TRUTH_VALUE: Final = "combine conditions with & | ~ (not and/or/not), and parenthesise \
comparisons: (subject.a > 1) & (subject.b == 'x')"
PLAIN_VALUES: Final = "use strings, numbers, booleans, None or lists of them (write dates as \
ISO strings, '2026-01-31')"


class _Missing:
    """The value of a path that leads nowhere; distinct from every JSON value."""

    _instance: _Missing | None = None

    def __new__(cls) -> _Missing:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "MISSING"

    def __bool__(self) -> bool:
        return False


MISSING: Final = _Missing()


@dataclass(frozen=True)
class Env:
    """What an expression can read. Any part may be absent (then its paths are missing)."""

    subject: Mapping[str, Any] = field(default_factory=dict)
    #: Payloads deposited so far, keyed by slot name.
    payload: Mapping[str, Any] = field(default_factory=dict)
    #: A mapping or an object with attributes (``id``, ``roles``, ``attributes``...).
    principal: Any = None
    #: The foreach element of the slot, if any.
    item: Any = MISSING
    #: What automatic steps returned, keyed by state name (docs/automatic-steps.md).
    result: Mapping[str, Any] = field(default_factory=dict)


class Expr:
    """Base of every expression node. Operators build new nodes; nothing is evaluated here."""

    __slots__ = ()

    # Comparisons build nodes rather than answer, so expressions cannot be
    # hashed by value or tested for truth.
    __hash__ = object.__hash__

    def __eq__(self, other: object) -> Compare:  # type: ignore[override]
        return Compare("==", self, lift(other))

    def __ne__(self, other: object) -> Compare:  # type: ignore[override]
        return Compare("!=", self, lift(other))

    def __lt__(self, other: object) -> Compare:
        return Compare("<", self, lift(other))

    def __le__(self, other: object) -> Compare:
        return Compare("<=", self, lift(other))

    def __gt__(self, other: object) -> Compare:
        return Compare(">", self, lift(other))

    def __ge__(self, other: object) -> Compare:
        return Compare(">=", self, lift(other))

    def __and__(self, other: object) -> Logic:
        return Logic("and", (self, lift(other)))

    def __rand__(self, other: object) -> Logic:
        return Logic("and", (lift(other), self))

    def __or__(self, other: object) -> Logic:
        return Logic("or", (self, lift(other)))

    def __ror__(self, other: object) -> Logic:
        return Logic("or", (lift(other), self))

    def __invert__(self) -> Logic:
        return Logic("not", (self,))

    def __add__(self, other: object) -> Arith:
        return Arith("+", self, lift(other))

    def __radd__(self, other: object) -> Arith:
        return Arith("+", lift(other), self)

    def __sub__(self, other: object) -> Arith:
        return Arith("-", self, lift(other))

    def __rsub__(self, other: object) -> Arith:
        return Arith("-", lift(other), self)

    def __mul__(self, other: object) -> Arith:
        return Arith("*", self, lift(other))

    def __rmul__(self, other: object) -> Arith:
        return Arith("*", lift(other), self)

    def __truediv__(self, other: object) -> Arith:
        return Arith("/", self, lift(other))

    def __bool__(self) -> bool:
        what = f"the condition `{self}` has no truth value while a workflow is defined"
        raise problems.ConditionMisused(what, fix=NO_TRUTH_VALUE)

    def is_in(self, values: Iterable[Any] | Expr) -> Membership:
        """True when this value is one of ``values`` (a literal list or a path to a list)."""
        return Membership(self, lift(values if isinstance(values, Expr) else list(values)))

    def contains(self, value: Any) -> Membership:
        """True when this collection holds ``value``."""
        return Membership(lift(value), self)

    def is_set(self) -> IsSet:
        """True when the value is present and not null; never unknown."""
        return IsSet(self)

    def is_missing(self) -> Logic:
        """True when the value is absent or null; never unknown."""
        return Logic("not", (IsSet(self),))

    def __str__(self) -> str:
        from taskflow.core.definition.conditions.expr_text import describe

        return describe(self)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self}>"


class Ref(Expr):
    """A path from one of the four roots: ``subject.customer.country``.

    Attribute access extends the path; ``ref["odd name"]`` reaches fields whose
    names clash with a method (``is_in``, ``contains``, ``is_set``...).
    """

    __slots__ = ("_parts", "_root")
    _root: str
    _parts: tuple[str, ...]

    def __init__(self, root: str, parts: tuple[str, ...] = ()) -> None:
        if root not in ROOTS:
            raise problems.UnknownRoot(f"unknown root {root!r}", fix=f"use one of {ROOTS}")
        object.__setattr__(self, "_root", root)
        object.__setattr__(self, "_parts", parts)

    @property
    def root(self) -> str:
        """``subject``, ``payload``, ``principal`` or ``item``."""
        return self._root

    @property
    def parts(self) -> tuple[str, ...]:
        """The field names after the root."""
        return self._parts

    @property
    def dotted(self) -> str:
        """``subject.customer.country``."""
        return ".".join((self.root, *self.parts))

    def __getattr__(self, name: str) -> Ref:
        if name.startswith("_"):
            raise AttributeError(name)
        return Ref(self.root, (*self.parts, name))

    def __getitem__(self, name: str) -> Ref:
        return Ref(self.root, (*self.parts, name))

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("expressions are immutable")


@dataclass(frozen=True, eq=False, repr=False)
class Lit(Expr):
    """A literal: a JSON scalar or a list of them."""

    value: Any


@dataclass(frozen=True, eq=False, repr=False)
class Binary(Expr):
    """``left <op> right``: a comparison or an arithmetic operation."""

    op: str
    left: Expr
    right: Expr


class Compare(Binary):
    """``op`` one of == != < <= > >=; unknown if either side is missing."""


@dataclass(frozen=True, eq=False, repr=False)
class Logic(Expr):
    """``and`` / ``or`` over operands, or ``not`` of one, in Kleene three-valued logic."""

    op: str
    args: tuple[Expr, ...]


@dataclass(frozen=True, eq=False, repr=False)
class Membership(Expr):
    """``needle in haystack``; unknown when either side is missing or not a collection."""

    needle: Expr
    haystack: Expr


@dataclass(frozen=True, eq=False, repr=False)
class IsSet(Expr):
    """True when the operand has a non-null value."""

    operand: Expr


class Arith(Binary):
    """``op`` one of + - * /; missing or non-numeric operands give missing."""


subject: Final = Ref("subject")
payload: Final = Ref("payload")
principal: Final = Ref("principal")
item: Final = Ref("item")
result: Final = Ref("result")


def lift(value: object) -> Expr:
    """An expression for ``value``: itself if already one, else a literal."""
    if isinstance(value, Expr):
        return value
    if isinstance(value, tuple | list):
        return Lit([_plain(v) for v in value])
    return Lit(_plain(value))


def _plain(value: object) -> Any:
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    raise problems.ConditionMisused(f"{value!r} cannot appear in a condition", fix=PLAIN_VALUES)


# -- evaluation ---------------------------------------------------------------------------------


def _step(value: Any, name: str) -> Any:
    if value is MISSING or value is None:
        return MISSING
    if isinstance(value, Mapping):
        return value.get(name, MISSING)
    if isinstance(value, str | int | float | bool | list | tuple):
        return MISSING
    return getattr(value, name, MISSING)


def resolve(ref: Ref, env: Env) -> Any:
    """The value at ``ref`` in ``env``, or :data:`MISSING`."""
    value: Any = getattr(env, ref.root)
    for name in ref.parts:
        value = _step(value, name)
    return value


COMPARE_OPS: Final[dict[str, Callable[[Any, Any], Any]]] = {
    "==": operator.eq,
    "!=": operator.ne,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}
ARITH_OPS: Final[dict[str, Callable[[Any, Any], Any]]] = {
    "+": operator.add,
    "-": operator.sub,
    "*": operator.mul,
    "/": operator.truediv,
}


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def value_of(expr: Expr, env: Env) -> Any:
    """The value of ``expr``: a JSON-like value, a truth value, None (unknown) or MISSING."""
    if isinstance(expr, Ref):
        return resolve(expr, env)
    if isinstance(expr, Lit):
        return expr.value
    if isinstance(expr, Arith):
        left, right = value_of(expr.left, env), value_of(expr.right, env)
        if not (_number(left) and _number(right)) or (expr.op == "/" and right == 0):
            return MISSING
        return ARITH_OPS[expr.op](left, right)
    return evaluate(expr, env)


def evaluate(expr: Expr | None, env: Env) -> bool | None:
    """Three-valued truth of a condition: True, False, or None for unknown.

    ``None`` as the expression (no condition) is True. A bare value used as a
    condition is true when it is ``True`` or a non-empty value, unknown when missing.
    """
    if expr is None:
        return True
    if isinstance(expr, Compare):
        left, right = value_of(expr.left, env), value_of(expr.right, env)
        if left is MISSING or right is MISSING or left is None or right is None:
            return None
        try:
            return bool(COMPARE_OPS[expr.op](left, right))
        except TypeError:
            return None  # "abc" < 5: incomparable is unknown, not a crash
    if isinstance(expr, Logic):
        if expr.op == "not":
            inner = evaluate(expr.args[0], env)
            return None if inner is None else not inner
        results = [evaluate(arg, env) for arg in expr.args]
        decisive = expr.op == "or"  # True decides an or; False decides an and
        if decisive in results:
            return decisive
        return None if None in results else not decisive
    if isinstance(expr, Membership):
        needle, haystack = value_of(expr.needle, env), value_of(expr.haystack, env)
        if needle is MISSING or needle is None or not isinstance(haystack, list | tuple):
            return None
        return needle in haystack
    if isinstance(expr, IsSet):
        value = value_of(expr.operand, env)
        return value is not MISSING and value is not None
    value = value_of(expr, env)
    if value is MISSING or value is None:
        return None
    return bool(value)


def matches(expr: Expr | None, env: Env) -> bool:
    """True only when the condition is definitely true (unknown does not match)."""
    return evaluate(expr, env) is True


# ``describe`` (the human reading) lives in ``expr_text.py``; imported last, because it
# reads the node classes above (the methods above call it at run time only).
from taskflow.core.definition.conditions.expr_text import describe as describe  # noqa: E402
