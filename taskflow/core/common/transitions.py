"""A status table: which move is legal from which status, and where it leads.

``Transitions[status, move]`` is the status a thing takes when ``move`` is made from
``status``; a pair missing from the table is a move it cannot make. A table is declared
move by move: the statuses a move may be made from, and the one status it leads to. Slots
(``core/runs/statuses.py``) and timer rows (``core/clocks/timer_states.py``) each declare one;
callers ask :meth:`Transitions.allows` / :meth:`Transitions.after` instead of comparing
strings (h11's ``_state.py`` is the model).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from enum import StrEnum
from types import MappingProxyType
from typing import Generic, TypeVar

S = TypeVar("S", bound=StrEnum)
M = TypeVar("M", bound=StrEnum)


class Transitions(Mapping[tuple[S, M], S], Generic[S, M]):
    """(status, move) -> the status after the move; read-only."""

    def __init__(
        self, thing: str, status: Callable[[str], S], moves: Mapping[M, tuple[Iterable[S], S]]
    ):
        """``moves``: each move, the statuses it may be made from and the one it leads to."""
        #: What the table is of, as messages name it ("slot", "timer").
        self.thing = thing
        self._status = status
        self._table = MappingProxyType(
            {(before, move): after for move, (froms, after) in moves.items() for before in froms}
        )

    def __getitem__(self, key: tuple[S, M]) -> S:
        return self._table[key]

    def __iter__(self) -> Iterator[tuple[S, M]]:
        return iter(self._table)

    def __len__(self) -> int:
        return len(self._table)

    def allows(self, status: str, move: M) -> bool:
        """Whether a thing in ``status`` can make ``move``."""
        return (self._status(status), move) in self._table

    def after(self, status: str, move: M) -> S:
        """The status after ``move`` from ``status``; ``ValueError`` for a move the table lacks
        (callers check :meth:`allows` first and refuse with their typed refusal)."""
        try:
            return self._table[self._status(status), move]
        except KeyError:
            raise ValueError(f"A {status} {self.thing} cannot {move.value}.") from None
