"""Expressions as data: the paths they read, and their JSON form (``to_json`` / ``from_json``)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from taskflow.core.definition.conditions import expr as ex


def walk(expr: ex.Expr) -> Iterable[ex.Expr]:
    """Every node of ``expr``, parents before children."""
    yield expr
    children: tuple[ex.Expr, ...] = ()
    if isinstance(expr, ex.Binary):
        children = (expr.left, expr.right)
    elif isinstance(expr, ex.Logic):
        children = expr.args
    elif isinstance(expr, ex.Membership):
        children = (expr.needle, expr.haystack)
    elif isinstance(expr, ex.IsSet):
        children = (expr.operand,)
    for child in children:
        yield from walk(child)


def refs(expr: ex.Expr) -> tuple[ex.Ref, ...]:
    """The paths ``expr`` reads, in order of appearance."""
    return tuple(node for node in walk(expr) if isinstance(node, ex.Ref))


def paths(expr: ex.Expr | None, root: str | None = None) -> frozenset[str]:
    """Dotted paths read by ``expr`` (``subject.amount``), optionally only under ``root``.

    ``paths(budget_key, "subject")`` tells the SLA code which budgets depend on the subject.
    """
    if expr is None:
        return frozenset()
    return frozenset(r.dotted for r in refs(expr) if root is None or r.root == root)


def to_json(expr: ex.Expr) -> Any:
    """The JSON form: ``{"ref": "subject.a"}``, ``{"lit": 1}`` or ``{"op": o, "args": [...]}``.

    Operators: ``== != < <= > >=``, ``and``, ``or``, ``not``, ``in`` (needle, haystack),
    ``is_set``, ``+ - * /``.
    """
    if isinstance(expr, ex.Ref):
        return {"ref": expr.dotted}
    if isinstance(expr, ex.Lit):
        return {"lit": expr.value}
    if isinstance(expr, ex.Binary):
        return {"op": expr.op, "args": [to_json(expr.left), to_json(expr.right)]}
    if isinstance(expr, ex.Logic):
        return {"op": expr.op, "args": [to_json(a) for a in expr.args]}
    if isinstance(expr, ex.Membership):
        return {"op": "in", "args": [to_json(expr.needle), to_json(expr.haystack)]}
    if isinstance(expr, ex.IsSet):
        return {"op": "is_set", "args": [to_json(expr.operand)]}
    raise TypeError(f"not an expression: {expr!r}")


def from_json(doc: Any) -> ex.Expr:
    """The inverse of :func:`to_json`."""
    if "ref" in doc:
        root, *parts = str(doc["ref"]).split(".")
        return ex.Ref(root, tuple(parts))
    if "lit" in doc:
        return ex.Lit(doc["lit"])
    op, args = doc["op"], [from_json(a) for a in doc["args"]]
    if op in ex.COMPARE_OPS:
        return ex.Compare(op, args[0], args[1])
    if op in ex.ARITH_OPS:
        return ex.Arith(op, args[0], args[1])
    if op in ("and", "or", "not"):
        return ex.Logic(op, tuple(args))
    if op == "in":
        return ex.Membership(args[0], args[1])
    if op == "is_set":
        return ex.IsSet(args[0])
    raise ValueError(f"unknown operator {op!r} in an expression document")
