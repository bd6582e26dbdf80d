"""The one builder of dynamic statements: a named base statement plus typed filter values.

A base statement (``store/<room>/<file>.sql``) marks where dynamic parts go with comments:
``/*:where*/`` (the composed `` AND ...`` conditions) and ``/*:order*/`` (an ORDER BY
chosen from :data:`ORDERS`). Conditions are named fragments of ``store/common/fragments.sql``
(a fixed list: no identifier comes from a caller), each with ``$?`` where a value goes;
:class:`Statement` numbers those after the base statement's own ``$1..$k`` and keeps the
values in ``args``. A value never becomes text: the only numbers written into the text
are a page's ``LIMIT`` (a checked ``int``, so the planner sees the real bound).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from typing import Any, Final

from taskflow.store.common import sql


def _one_line(text: str) -> str:
    """A fragment without its comment lines, on one line (so nothing after it is commented)."""
    return " ".join(
        line.strip() for line in text.splitlines() if not line.strip().startswith("--")
    ).strip()


#: The named condition fragments (``fragments.sql``), each with ``$?`` per value.
FRAGMENTS: Final[Mapping[str, str]] = {
    name: _one_line(text) for name, text in sql.statements("common/fragments").items()
}

_SLOT = "$?"
#: Each fragment split at its ``$?``.
_PIECES: Final[Mapping[str, tuple[str, ...]]] = {
    name: tuple(text.split(_SLOT)) for name, text in FRAGMENTS.items()
}

#: The orders a statement may be sorted by, by name.
ORDERS: Final[Mapping[str, str]] = {
    #: The runs list: newest first (its keyset is ``run_before_in_start``).
    "newest": "r.started_at DESC, r.id DESC",
}

#: Casts a placeholder may carry.
CASTS: Final[frozenset[str]] = frozenset({"", "::text[]", "::uuid[]", "::uuid", "::int"})

MAX_LIMIT: Final[int] = 100_000
_MARKER = re.compile(r"/\*:(\w+)\*/")


class BuildError(ValueError):
    """A statement was composed against the builder's rules (a programming error)."""


class Statement:
    """A statement being composed: its text so far and its parameters, numbered in order."""

    def __init__(self, base: str, *fixed: Any) -> None:
        self._base = base
        self.args: list[Any] = list(fixed)
        self._where: list[str] = []
        self._order = ""

    @classmethod
    def over(cls, args: list[Any]) -> Statement:
        """Conditions only, numbered after and appended to an existing ``args`` list."""
        statement = cls("/*:where*/")
        statement.args = args
        return statement

    def copy(self, base: str) -> Statement:
        """Another statement ``base`` with these conditions, order and parameters so far."""
        other = Statement(base, *self.args)
        other._where = list(self._where)
        other._order = self._order
        return other

    def param(self, value: Any, cast: str = "") -> str:
        """Take ``value`` as the next parameter; its placeholder (``$n`` then ``cast``)."""
        if cast not in CASTS:
            raise BuildError(f"cast {cast!r} is not one of {sorted(CASTS)}.")
        self.args.append(value)
        return f"${len(self.args)}{cast}"

    def fragment(self, name: str, *values: Any) -> str:
        """The text of fragment ``name`` with its ``$?`` numbered for ``values``."""
        try:
            pieces = _PIECES[name]
        except KeyError:
            raise BuildError(f"no fragment {name!r} in fragments.sql.") from None
        args = self.args
        if len(pieces) == 2 and len(values) == 1:  # the common case, kept short
            args.append(values[0])
            return f"{pieces[0]}${len(args)}{pieces[1]}"
        if len(pieces) - 1 != len(values):
            wanted = len(pieces) - 1
            raise BuildError(f"fragment {name!r} takes {wanted} values, not {len(values)}.")
        out = [pieces[0]]
        for value, piece in zip(values, pieces[1:], strict=True):
            args.append(value)
            out += ["$", str(len(args)), piece]
        return "".join(out)

    def any_of(self, groups: Sequence[Sequence[tuple[str, tuple[Any, ...]]]]) -> str:
        """``((a AND b) OR (c) ...)``: any group whose fragments all hold (no group: false;
        an empty group: true)."""
        if not groups:
            return "false"
        ors = []
        for group in groups:
            ands = [self.fragment(name, *values) for name, values in group] or ["true"]
            ors.append("(" + " AND ".join(ands) + ")")
        return "(" + " OR ".join(ors) + ")"

    def wrapped(self, name: str, inner: str, *values: Any) -> str:
        """Fragment ``name`` with ``inner`` (text composed by this statement) in its
        ``/*:inner*/`` marker."""
        text = self.fragment(name, *values)
        if "/*:inner*/" not in text:
            raise BuildError(f"fragment {name!r} has no /*:inner*/ marker.")
        return text.replace("/*:inner*/", inner)

    def where_text(self, text: str) -> Statement:
        """Add `` AND <text>``, ``text`` composed by :meth:`fragment`, :meth:`any_of` or
        :meth:`wrapped` of this statement (never by hand)."""
        self._where.append(text)
        return self

    def where(self, name: str, *values: Any) -> Statement:
        """Add `` AND <fragment>`` to the conditions."""
        self._where.append(self.fragment(name, *values))
        return self

    def where_given(self, *conditions: tuple[str, Any]) -> Statement:
        """Add `` AND <fragment>`` for each ``(name, value)`` whose value is not ``None``
        (a filter's optional fields: an absent one does not narrow)."""
        for name, value in conditions:
            if value is not None:
                self.where(name, value)
        return self

    def where_any(self, groups: Sequence[Sequence[tuple[str, tuple[Any, ...]]]]) -> Statement:
        """Add `` AND ((a AND b) OR (c) ...)`` (see :meth:`any_of`)."""
        return self.where_text(self.any_of(groups))

    def conditions(self) -> str:
        """The conditions so far as `` AND ...`` text ("" when none)."""
        return _anded(self._where)

    def order(self, name: str) -> Statement:
        if name not in ORDERS:
            raise BuildError(f"order {name!r} is not one of {sorted(ORDERS)}.")
        self._order = ORDERS[name]
        return self

    def text(self, *, limit: int | None = None) -> str:
        """The statement's text: the markers filled, ``/*:limit*/`` with ``limit``."""
        return _filled(self._base, tuple(self._where), self._order, limit)

    def build(self, *, limit: int | None = None) -> tuple[str, list[Any]]:
        """(text, args) ready for ``conn.fetch(text, *args)``."""
        return self.text(limit=limit), list(self.args)


def _anded(conditions: Sequence[str]) -> str:
    return "".join(f" AND {c}" for c in conditions)


@functools.lru_cache(maxsize=1024, typed=True)
def _filled(base: str, where: tuple[str, ...], order: str, limit: int | None) -> str:
    """``base`` with its markers filled: a function of the statement's shape alone (its
    conditions' text carries placeholders, never values), so each shape is composed once
    per process (a claim or an inbox page from the same filters sends the same text)."""
    parts = _template(base)
    out = [parts[0]]
    for i in range(1, len(parts), 2):
        marker = parts[i]
        if marker == "where":
            out.append(_anded(where))
        elif marker == "order":
            if not order:
                raise BuildError("the statement needs an order (Statement.order).")
            out.append(order)
        elif marker == "limit":
            if type(limit) is not int or not 0 <= limit <= MAX_LIMIT:
                raise BuildError(f"limit must be an int in [0, {MAX_LIMIT}], not {limit!r}.")
            out.append(str(limit))
        else:
            raise BuildError(f"marker /*:{marker}*/ is not filled (see with_columns).")
        out.append(parts[i + 1])
    return "".join(out)


@functools.lru_cache(maxsize=512)
def _template(base: str) -> tuple[str, ...]:
    """``base`` split at its markers: text, marker name, text, ... (parsed once per text)."""
    return tuple(_MARKER.split(base))


def with_columns(statements: Mapping[str, str], **columns: str) -> dict[str, str]:
    """``statements`` with their ``/*:<name>*/`` column-list markers filled from ``columns``
    (lists of the store's own constants, filled once at import; a marker left unfilled but
    ``where``, ``order`` and ``limit`` is refused)."""
    filled = {}
    for name, text in statements.items():
        for key, value in columns.items():
            text = text.replace(f"/*:{key}*/", value)
        left = set(_MARKER.findall(text)) - {"where", "order", "limit"}
        if left:
            raise BuildError(f"statement {name!r} has unfilled markers {sorted(left)}.")
        filled[name] = text
    return filled


def compose(base: str, **parts: str) -> str:
    """``base`` with each of its ``/*:<name>*/`` markers filled from ``parts``: text the
    store composed from its own fixed lists (a report's groupings, a measured rows' CTE),
    never a value. A marker left unfilled, or a part ``base`` has no marker for, is refused."""
    markers = set(_MARKER.findall(base))
    if markers != set(parts):
        raise BuildError(
            f"markers {sorted(markers)} and parts {sorted(parts)} differ: fill each marker once."
        )
    return _MARKER.sub(lambda m: parts[m.group(1)], base)
