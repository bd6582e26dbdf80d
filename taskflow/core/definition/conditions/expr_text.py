"""The human reading of a condition: ``subject.amount > 1000 and payload.x == "approve"``.

Parentheses appear only where precedence needs them (and always around an and/or
inside another and/or); ``not x.is_set()`` reads ``x is missing``.
"""

from __future__ import annotations

from typing import Any, Final

from taskflow.core.definition.conditions.expr import (
    Arith,
    Compare,
    Expr,
    IsSet,
    Lit,
    Logic,
    Membership,
    Ref,
)

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
