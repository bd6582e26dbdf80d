"""Conditions: expressions over the subject, deposited payloads, the principal and a foreach item.

A definition never holds lambdas for its rules: ``subject.amount > 1000`` builds
a small tree that the engine can evaluate, render to JSON, show to people and
check when the definition loads. Seven symbols start every path:

- ``subject``: the tracked entity's attributes (``subject.amount``);
- ``payload``: payloads deposited so far, per slot name (``payload.review.decision``);
- ``principal``: the acting principal (``principal.id``, ``principal.roles``);
- ``item``: the element of a ``foreach`` slot (``item`` or ``item.kind``);
- ``result`` and ``child``: what automatic steps returned, how child runs ended;
- ``actor``: who acted (``actor.login``, ``actor.roles``, ``actor.kind``), in routes,
  completion rules, guards and preconditions (``core/definition/actors.py``).

Evaluation is three-valued, as in SQL: a missing (or null) field makes a
comparison *unknown* (``None``), ``&``/``|``/``~`` follow Kleene logic, and an
unknown condition does not match. Combine conditions with ``&``, ``|`` and
``~`` and parenthesise comparisons: ``(subject.amount > 1000) & subject.urgent``.
Python's ``and``/``or``/``not`` cannot be overloaded and are refused.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

# The tree (its nodes, the five roots, ``lift`` and the human reading ``describe``) lives in
# ``tree.py``, below this module: callers import this one module for both.
from taskflow.core.definition.conditions.tree import (
    NO_TRUTH_VALUE,
    PLAIN_VALUES,
    ROOTS,
    Arith,
    Binary,
    Compare,
    Expr,
    IsSet,
    Lit,
    Logic,
    Membership,
    Ref,
    actor,
    describe,
    expired,
    item,
    lift,
    payload,
    principal,
    result,
    subject,
)

__all__ = [
    "ARITH_OPS",
    "COMPARE_OPS",
    "MISSING",
    "NO_TRUTH_VALUE",
    "PLAIN_VALUES",
    "ROOTS",
    "Arith",
    "Binary",
    "Compare",
    "Env",
    "Expr",
    "IsSet",
    "Lit",
    "Logic",
    "Membership",
    "Ref",
    "actor",
    "describe",
    "evaluate",
    "expired",
    "item",
    "lift",
    "matches",
    "payload",
    "principal",
    "resolve",
    "result",
    "subject",
    "value_of",
]


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
    #: The outcomes of child runs, keyed by label (docs/composition.md).
    child: Mapping[str, Any] = field(default_factory=dict)
    #: Who acted (``actor.login``, ``actor.roles``, ``actor.kind``: core/definition/actors.py).
    actor: Any = MISSING
    #: By slot name: how often it expired in the run, when it expired in this visit (routes).
    expired: Mapping[str, Any] = field(default_factory=dict)


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
