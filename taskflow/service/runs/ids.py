"""Ids of new runs and slots: minted here, in the shell (the core takes ``new_id`` as an argument).

A leaf: ``persist``, ``decisions`` and every use case that decides import it.
"""

from __future__ import annotations

import uuid


def new_id() -> str:
    """A fresh id for runs and slots (ids are chosen by the shell, never by the core)."""
    return str(uuid.uuid4())
