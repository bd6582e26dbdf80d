"""The channel an act comes through, recorded on every timeline line it writes.

An agent's tool call (``taskflow mcp``) runs the same use cases as the GraphQL API, as the
same principal; ``acting_via("mcp:<client>")`` around it makes each line it writes carry
``"via": "mcp:<client>"`` in its details, so the timeline tells a person's act from their
agent's (docs/agents.md), and the agent's reason where the line has none of its own.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from taskflow.store.runs import timeline


@contextmanager
def acting_via(channel: str, reason: str | None = None) -> Iterator[None]:
    """Lines written inside the block record ``channel`` as their ``via`` (and ``reason``
    where they carry none)."""
    token = timeline.VIA.set((channel, reason))
    try:
        yield
    finally:
        timeline.VIA.reset(token)
