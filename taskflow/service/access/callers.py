"""The callers a process has authenticated, kept so that a hot statement can act for one
without reading it first.

Every request authenticates its bearer token against the principal's row (active, not
signed out since the token was issued). ``claimNext`` does so in the same round trip as
its claim: the process keeps each principal it authenticated with the digest of its row
(``store/access/principals.get_checked``), claims with the kept principal's audience keys, and
the claim statement acts only if the row still has that digest (fragment
``caller_unchanged``). Any change of the row (deactivation, sign out everywhere, roles,
groups, attributes, powers) changes the digest, so it takes effect at once, in every
process, with no invalidation to send: the statement claims nothing and the caller is
authenticated afresh (:class:`CallerChanged`).
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass

from taskflow.core.access.principals import Principal

#: How many principals a process keeps (the first kept are forgotten first).
KEPT = 4096


@dataclass(frozen=True)
class Presumed:
    """A principal as this process last authenticated it, and the digest of its row then."""

    principal: Principal
    digest: str


class CallerChanged(Exception):  # control flow between layers, never shown to a client
    """A statement run for a presumed caller did nothing: its row changed since it was kept,
    or there was nothing to do. Authenticate the caller afresh and run it again."""


class KnownCallers:
    """Principals by id, as last authenticated by this process (bounded)."""

    def __init__(self, size: int = KEPT) -> None:
        self._size = size
        self._kept: OrderedDict[str, Presumed] = OrderedDict()

    def keep(self, presumed: Presumed) -> None:
        self._kept[presumed.principal.id] = presumed
        if len(self._kept) > self._size:
            self._kept.popitem(last=False)

    def get(self, principal_id: str) -> Presumed | None:
        return self._kept.get(principal_id)

    def forget(self, principal_id: str) -> None:
        self._kept.pop(principal_id, None)
