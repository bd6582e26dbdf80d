"""Who may act: candidates and delegates, and their compilation to audience keys.

One expression surface serves candidates, delegates and reminder recipients::

    who.role("finance") - who.id(subject.submitted_by)          # separation of duties
    who.id(subject.manager_id) | (who.role("manager") & (who.attr("region") == subject.region))

Compiled when a slot opens (against the subject and the foreach item) into an
:class:`Audience`: ``keys``, any of which a principal must carry, and
``residual`` rules that must all pass as well. Keys are plain strings:

==========================  =========================================
``user:<id>``               the principal with that id
``role:<role>``             principals holding the role
``group:<group>``           members of the group
``attr:<name>=<value>``     principals whose attribute ``name`` equals ``value``
``email:<address>``         whoever has that address (outsiders reached by link)
``any``                     every principal (``who.anyone()``)
==========================  =========================================

Values are written as text: booleans ``true``/``false``, integral numbers
without a decimal point. :func:`principal_keys` gives the keys a principal
carries, so the inbox is ``slot.keys && principal_keys(me)`` in SQL, and the
residual rules (:class:`Rule`: a key, ``not``, ``all``, ``any``, or
``unknown``) are checked on the rows that survive, in SQL where they can be
(``NOT ($me && ARRAY['user:bob'])``) or with :meth:`Rule.holds`.

A subject field that is missing makes its term *unknown*: it grants no one,
and an exclusion that cannot be resolved ("not the submitter" with no
``submitted_by``) shuts the audience rather than silently letting everyone in.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from taskflow.core.definition.conditions import expr as ex
from taskflow.core.definition.conditions.who import (
    AttrRule,
    Combine,
    Key,
    Special,
    Who,
    describe,
    emails,
    exclusions,
    keeping_exclusions,
    key_text,
    refs,
    specials,
    to_json,
    who,
    widen,
)

__all__ = [
    "ANY_KEY",
    "AttrRule",
    "Audience",
    "Combine",
    "Key",
    "Rule",
    "Special",
    "Who",
    "compile",
    "compile_rule",
    "describe",
    "email_names",
    "emails",
    "exclusions",
    "keeping_exclusions",
    "matches",
    "principal_keys",
    "refs",
    "specials",
    "to_json",
    "who",
    "widen",
]

ANY_KEY: Final = "any"


# -- compiled form ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Rule:
    """A residual rule over a principal's keys.

    ``op`` is ``key`` (carries ``key``), ``not``, ``all``, ``any`` (over ``args``)
    or ``unknown`` (a subject field was missing: ``key`` holds the path; never passes).
    """

    op: str
    key: str = ""
    args: tuple[Rule, ...] = ()

    def holds(self, keys: frozenset[str]) -> bool | None:
        """Three-valued: does a principal carrying ``keys`` satisfy the rule?"""
        if self.op == "key":
            return self.key in keys
        if self.op == "unknown":
            return None
        if self.op == "not":
            inner = self.args[0].holds(keys)
            return None if inner is None else not inner
        results = [a.holds(keys) for a in self.args]
        decisive = self.op == "any"
        if decisive in results:
            return decisive
        return None if None in results else not decisive

    def __str__(self) -> str:
        if self.op == "key":
            return self.key
        if self.op == "unknown":
            return f"unknown({self.key} is missing)"
        if self.op == "not":
            return "not " + str(self.args[0])
        joiner = " and " if self.op == "all" else " or "
        return "(" + joiner.join(str(a) for a in self.args) + ")"

    def to_json(self) -> Any:
        """``{"key": k}``, ``{"unknown": path}``, ``{"not": r}``, ``{"all"|"any": [...]}``."""
        if self.op in ("key", "unknown"):
            return {self.op: self.key}
        if self.op == "not":
            return {"not": self.args[0].to_json()}
        return {self.op: [a.to_json() for a in self.args]}

    @staticmethod
    def from_json(doc: Mapping[str, Any]) -> Rule:
        """The inverse of :meth:`to_json`."""
        ((op, value),) = doc.items()
        if op in ("key", "unknown"):
            return Rule(op, key=str(value))
        if op == "not":
            return Rule("not", args=(Rule.from_json(value),))
        return Rule(op, args=tuple(Rule.from_json(v) for v in value))


@dataclass(frozen=True)
class Audience:
    """Who may act on an open slot: any of ``keys``, and every ``residual`` rule."""

    keys: frozenset[str]
    residual: tuple[Rule, ...] = ()

    def admits(self, keys: frozenset[str]) -> bool:
        """True when a principal carrying ``keys`` belongs to the audience."""
        return bool(self.keys & keys) and all(r.holds(keys) is True for r in self.residual)

    def to_json(self) -> Any:
        """``{"keys": [...sorted], "residual": [...]}``."""
        return {"keys": sorted(self.keys), "residual": [r.to_json() for r in self.residual]}

    def __str__(self) -> str:
        text = "any of " + ", ".join(sorted(self.keys)) if self.keys else "nobody"
        return text + "".join(f", and {r}" for r in self.residual)


def _values(value: ex.Expr, env: ex.Env) -> list[Any] | None:
    """The resolved values of a key's argument (a list yields several), or None if missing."""
    resolved = ex.value_of(value, env)
    if resolved is ex.MISSING or resolved is None:
        return None
    return list(resolved) if isinstance(resolved, list | tuple) else [resolved]


def _any_of(keys: Iterable[str]) -> Rule:
    rules = tuple(Rule("key", key=k) for k in sorted(set(keys)))
    return rules[0] if len(rules) == 1 else Rule("any", args=rules)


def _formula(
    w: Who, env: ex.Env, holder: str | None, candidates: Who | None, depth: int = 0
) -> Rule:
    """``w`` resolved against the subject/item, as a rule over principal keys."""
    if isinstance(w, Key | AttrRule):
        exprs = (w.value,) if isinstance(w, Key) else w.values
        keys: list[str] = []
        for value in exprs:
            values = _values(value, env)
            if values is None:
                return Rule("unknown", key=ex.describe(value))
            prefix = f"{w.kind}:" if isinstance(w, Key) else f"attr:{w.name}="
            keys.extend(prefix + key_text(v) for v in values)
        return _any_of(keys) if keys else Rule("any", args=())
    if isinstance(w, Special):
        if w.kind == "anyone":
            return Rule("key", key=ANY_KEY)
        if w.kind == "holder":
            return Rule("key", key=f"user:{holder}") if holder else Rule("any", args=())
        if candidates is None or depth > 0:
            return Rule("any", args=())  # a slot's candidates cannot name themselves
        return _formula(candidates, env, holder, None, depth + 1)
    assert isinstance(w, Combine)
    args = tuple(_formula(a, env, holder, candidates, depth) for a in w.args)
    return Rule({"or": "any", "and": "all", "not": "not"}[w.op], args=args)


def _flatten(rule: Rule) -> Rule:
    """Merge nested all/any of the same kind, so the residual reads flat."""
    if rule.op not in ("all", "any"):
        if rule.op == "not":
            return Rule("not", args=(_flatten(rule.args[0]),))
        return rule
    args: list[Rule] = []
    for arg in (_flatten(a) for a in rule.args):
        args.extend(arg.args if arg.op == rule.op else (arg,))
    return Rule(rule.op, args=tuple(args))


def _prefilter(rule: Rule) -> frozenset[str] | None:
    """Keys one of which every admitted principal carries; None when no such set is known."""
    if rule.op == "key":
        return frozenset({rule.key})
    if rule.op == "unknown":
        return frozenset()  # an unknown term admits no one
    if rule.op == "any":
        parts = [_prefilter(a) for a in rule.args]
        if any(p is None for p in parts):
            return None
        return frozenset().union(*(p for p in parts if p is not None))
    if rule.op == "all":
        known = [p for p in (_prefilter(a) for a in rule.args) if p is not None]
        return min(known, key=_breadth) if known else None
    return None  # a bare exclusion bounds nothing


_BREADTH: Final = {"user": 0, "email": 0, "attr": 1, "group": 2, "role": 3}


def _breadth(keys: frozenset[str]) -> tuple[int, int]:
    """Rank prefilters: fewer keys first, then narrower kinds (a user before a role)."""
    widest = max((_BREADTH.get(k.split(":", 1)[0], 4) for k in keys), default=0)
    return len(keys), widest


def _is_plain_any(rule: Rule, keys: frozenset[str]) -> bool:
    """True when the rule says exactly "carries one of ``keys``"."""
    if rule.op == "key":
        return keys == {rule.key}
    return (
        rule.op == "any"
        and all(a.op == "key" for a in rule.args)
        and keys == {a.key for a in rule.args}
    )


def compile_rule(rule: Rule) -> Audience:
    """Split a resolved rule into prefilter keys and the residual rules that remain."""
    rule = _flatten(rule)
    keys = _prefilter(rule)
    if keys is None:  # "everyone except ...": every principal carries ANY_KEY
        keys = frozenset({ANY_KEY})
    parts = rule.args if rule.op == "all" else (rule,)
    residual = tuple(p for p in parts if not _is_plain_any(p, keys))
    return Audience(keys=keys, residual=residual)


def compile(
    w: Who,
    subject: Mapping[str, Any],
    item: Any = ex.MISSING,
    *,
    holder: str | None = None,
    candidates: Who | None = None,
) -> Audience:
    """Resolve ``w`` against a subject (and foreach item) into keys plus residual rules.

    ``holder`` resolves ``who.holder()``; ``candidates`` resolves ``who.candidates()``.
    """
    env = ex.Env(subject=subject, item=item)
    return compile_rule(_formula(w, env, holder, candidates))


def email_names(
    w: Who, subject: Mapping[str, Any], item: Any = ex.MISSING, *, candidates: Who | None = None
) -> dict[str, str]:
    """Address -> name of the outsiders ``w`` names with ``who.email(..., name=...)``.

    ``candidates`` resolves ``who.candidates()`` (as in :func:`compile`). Only names
    that resolve to non-empty text count; an address without one is absent.
    """
    env = ex.Env(subject=subject, item=item)
    names: dict[str, str] = {}
    terms = emails(w)
    if candidates is not None and "candidates" in specials(w):
        terms += emails(candidates)
    for term in terms:
        if term.name is None:
            continue
        name = ex.value_of(term.name, env)
        if not isinstance(name, str) or not name.strip():
            continue
        for address in _values(term.value, env) or ():
            names.setdefault(key_text(address), name.strip())
    return names


def principal_keys(principal: Any) -> frozenset[str]:
    """Keys of a principal: ``any``, ``user:<id>``, ``role:<r>``, ``group:<g>``, ``attr:<k>=<v>``.

    ``principal`` is a mapping or an object with ``id``, ``roles``, ``groups``,
    ``attributes`` and optionally ``email`` (giving ``email:<address>``); an
    attribute holding a list yields one key per element.
    """

    def read(name: str, default: Any) -> Any:
        if isinstance(principal, Mapping):
            return principal.get(name, default)
        return getattr(principal, name, default)

    keys = {ANY_KEY, f"user:{key_text(read('id', ''))}"}
    if read("email", None):
        keys.add(f"email:{key_text(read('email', ''))}")
    keys.update(f"role:{key_text(r)}" for r in read("roles", ()) or ())
    keys.update(f"group:{key_text(g)}" for g in read("groups", ()) or ())
    for name, value in (read("attributes", {}) or {}).items():
        for v in value if isinstance(value, list | tuple) else [value]:
            if v is not None:
                keys.add(f"attr:{name}={key_text(v)}")
    return frozenset(keys)


def matches(
    audience: Audience | Who,
    principal: Any,
    subject: Mapping[str, Any] | None = None,
    item: Any = ex.MISSING,
    *,
    holder: str | None = None,
    candidates: Who | None = None,
) -> bool:
    """True when ``principal`` belongs to ``audience`` (compiled first if an expression)."""
    if isinstance(audience, Who):
        audience = compile(audience, subject or {}, item, holder=holder, candidates=candidates)
    return audience.admits(principal_keys(principal))
