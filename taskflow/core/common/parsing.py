"""Whether a text is well formed: a parser tried on it, its ``ValueError`` read as "no"."""

from __future__ import annotations

from collections.abc import Callable


def parses(parse: Callable[[str], object], text: str) -> bool:
    """Whether ``parse(text)`` succeeds (``uuid.UUID``, ``ipaddress.ip_address``...): a
    ``ValueError`` is "no"; any other error is a fault and rises."""
    try:
        parse(text)
    except ValueError:
        return False
    return True
