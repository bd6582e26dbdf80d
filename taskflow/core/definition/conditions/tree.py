"""The expression tree: the nodes Python operators build, and their human reading.

``subject.amount > 1000`` builds ``Compare(">", Ref("subject", ("amount",)), Lit(1000))``;
nothing is evaluated here (``expr.py`` evaluates). ``describe`` (also ``str()``) reads a
tree back: ``subject.amount > 1000 and payload.x == "approve"``. Parentheses appear only
where precedence needs them (and always around an and/or inside another and/or);
``not x.is_set()`` reads ``x is missing``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Final

from taskflow.core.definition.checks import problems

ROOTS: Final = ("subject", "payload", "principal", "item", "result", "child", "actor", "expired")
NO_TRUTH_VALUE: Final = "combine conditions with & | ~ (not and/or/not), and parenthesise \
comparisons: (subject.a > 1) & (subject.b == 'x')"
PLAIN_VALUES: Final = "use strings, numbers, booleans, None or lists of them (write dates as \
ISO strings, '2026-01-31')"


def _compare(op: str) -> Callable[[Expr, object], Compare]:
    """The operator method building ``self <op> other`` as a comparison node."""

    def build(self: Expr, other: object) -> Compare:
        return Compare(op, self, lift(other))

    return build


def _logic(op: str, *, reflected: bool = False) -> Callable[[Expr, object], Logic]:
    """The operator method building ``self <op> other`` (``and``/``or``), or ``other <op> self``."""

    def build(self: Expr, other: object) -> Logic:
        return Logic(op, (lift(other), self) if reflected else (self, lift(other)))

    return build


def _arith(op: str, *, reflected: bool = False) -> Callable[[Expr, object], Arith]:
    """The operator method building ``self <op> other`` (arithmetic), or ``other <op> self``."""

    def build(self: Expr, other: object) -> Arith:
        return Arith(op, lift(other), self) if reflected else Arith(op, self, lift(other))

    return build


class Expr:
    """Base of every expression node. Operators build new nodes; nothing is evaluated here."""

    __slots__ = ()

    # Comparisons build nodes rather than answer, so expressions cannot be
    # hashed by value or tested for truth.
    __hash__ = object.__hash__

    # One line an operator: ``a > b`` builds ``Compare(">", a, b)``, ``1 + a`` builds
    # ``Arith("+", 1, a)`` (the reflected form keeps the written order).
    __eq__ = _compare("==")  # type: ignore[assignment]
    __ne__ = _compare("!=")  # type: ignore[assignment]
    __lt__ = _compare("<")
    __le__ = _compare("<=")
    __gt__ = _compare(">")
    __ge__ = _compare(">=")
    __and__ = _logic("and")
    __rand__ = _logic("and", reflected=True)
    __or__ = _logic("or")
    __ror__ = _logic("or", reflected=True)
    __add__ = _arith("+")
    __radd__ = _arith("+", reflected=True)
    __sub__ = _arith("-")
    __rsub__ = _arith("-", reflected=True)
    __mul__ = _arith("*")
    __rmul__ = _arith("*", reflected=True)
    __truediv__ = _arith("/")

    def __invert__(self) -> Logic:
        return Logic("not", (self,))

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
        """``subject``, ``payload``, ``principal``, ``item``, ``result`` or ``actor``."""
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
actor: Final = Ref("actor")
#: How often each slot of the current state has expired (0: not in this visit); docs/sla.md.
expired: Final = Ref("expired")


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


# -- the human reading ------------------------------------------------------------

_PRECEDENCE: Final = {"or": 1, "and": 2, "not": 3, "cmp": 4, "+": 5, "-": 5, "*": 6, "/": 6}


def describe(expr: Expr | None, parent: int = 0) -> str:
    """A human reading: ``subject.amount > 1000 and payload.review.decision == "approve"``."""
    if expr is None:
        return "always"
    if isinstance(expr, Ref):
        return expr.dotted
    if isinstance(expr, Lit):
        return _literal(expr.value)
    if isinstance(expr, Compare):
        text, level = f"{describe(expr.left, 5)} {expr.op} {describe(expr.right, 5)}", 4
    elif isinstance(expr, Arith):
        level = _PRECEDENCE[expr.op]
        text = f"{describe(expr.left, level)} {expr.op} {describe(expr.right, level + 1)}"
    elif isinstance(expr, Logic):
        level = _PRECEDENCE[expr.op]
        if expr.op == "not":
            inner = expr.args[0]
            if isinstance(inner, IsSet):
                return f"{describe(inner.operand, 5)} is missing"
            text = f"not {describe(inner, level)}"
        else:
            # and/or inside and/or always get parentheses: nobody should need precedence rules
            text = f" {expr.op} ".join(describe(a, 3) for a in expr.args)
    elif isinstance(expr, Membership):
        text, level = f"{describe(expr.needle, 5)} in {describe(expr.haystack, 5)}", 4
    elif isinstance(expr, IsSet):
        text, level = f"{describe(expr.operand, 5)} is set", 4
    else:  # pragma: no cover - every node kind is handled above
        raise TypeError(f"not an expression: {expr!r}")
    return f"({text})" if level < parent else text


def _literal(value: Any) -> str:
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, list):
        return "[" + ", ".join(_literal(v) for v in value) + "]"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    return repr(value)
