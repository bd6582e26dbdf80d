"""A context variable set for the length of a ``with`` block, and put back after it."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar
from typing import TypeVar

T = TypeVar("T")


@contextlib.contextmanager
def scoped(var: ContextVar[T], value: T) -> Iterator[None]:
    """Within: ``var`` holds ``value`` (in this task); after: what it held before, even when
    the block raised (``ContextVar.reset`` with the token of the set)."""
    token = var.set(value)
    try:
        yield
    finally:
        var.reset(token)
