"""The live feed's settled cursor: a timeline id below which nothing can still arrive.

Timeline ids come from one sequence, but transactions commit in their own order: line 100
may commit after line 101 was read and told. A cursor of 101 would then make a resuming
client (on this process or another) skip line 100. The watermark therefore hands out the
newest id below which every line has been read or will never exist: the lowest *gap*
(an id under the newest read that was not read) minus one.

A gap ends when its line is read, or when its transaction has certainly ended without
writing it (rolled back): the gap's id was drawn before the read that found the gap, so
by the next read its transaction holds an xid below that read's snapshot ``xmax`` (the
gap's *horizon*); a later read whose snapshot ``xmin`` is past the horizon, and which
looked the id up (:meth:`Watermark.lookups`), proves the line will never come.
"""

from __future__ import annotations

from collections.abc import Iterable

#: Gaps remembered at most; past it the oldest are given up (logged by the hub).
MAX_GAPS = 10_000


class Watermark:
    """Which timeline lines the hub has read, as a cursor safe to resume from."""

    def __init__(self, read_to: int) -> None:
        #: The newest line id read.
        self.read_to = read_to
        #: Gap id -> horizon (an xid; None until the read after the gap was found).
        self._gaps: dict[int, int | None] = {}

    @property
    def settled(self) -> int:
        """Every line at or below this id has been read (or will never commit)."""
        return min(self._gaps) - 1 if self._gaps else self.read_to

    @property
    def pending(self) -> bool:
        return bool(self._gaps)

    def lookups(self) -> list[tuple[int, int]]:
        """Id ranges of the gaps to look up with the next read (their horizons are known)."""
        ids = sorted(g for g, horizon in self._gaps.items() if horizon is not None)
        ranges: list[tuple[int, int]] = []
        for g in ids:
            if ranges and ranges[-1][1] == g - 1:
                ranges[-1] = (ranges[-1][0], g)
            else:
                ranges.append((g, g))
        return ranges

    def read(
        self, found: Iterable[int], looked_up: Iterable[tuple[int, int]], xmin: int, xmax: int
    ) -> int:
        """Record a read whose snapshot had ``xmin``/``xmax`` and which found ``found``
        (having looked up ``looked_up``); the number of gaps given up for space."""
        ids = set(found)
        searched = {g for low, high in looked_up for g in range(low, high + 1)}
        for gap, horizon in list(self._gaps.items()):
            if gap in ids or (gap in searched and horizon is not None and xmin >= horizon):
                del self._gaps[gap]  # read, or its transaction ended without it
            elif horizon is None:
                self._gaps[gap] = xmax
        top = max(ids, default=self.read_to)
        if top - self.read_to <= MAX_GAPS:
            for gap in range(self.read_to + 1, top):
                if gap not in ids:
                    self._gaps[gap] = None
        self.read_to = max(self.read_to, top)
        given_up = 0
        while len(self._gaps) > MAX_GAPS:
            del self._gaps[min(self._gaps)]
            given_up += 1
        return given_up
