"""Finding a refusal's class by its code: an untyped ``TaskflowError(code=...)`` (one stored
under an idempotency key, or a code not converted yet) made its refusal class again."""

from __future__ import annotations

from taskflow import errors
from taskflow.core.common.refusals import Refusal


def _classes(root: type[Refusal]) -> list[type[Refusal]]:
    found: list[type[Refusal]] = []
    for sub in root.__subclasses__():
        found.append(sub)
        found.extend(_classes(sub))
    return found


def by_code() -> dict[str, type[Refusal]]:
    """The refusal class of each code (the first class that declared it)."""
    table: dict[str, type[Refusal]] = {}
    for cls in _classes(Refusal):
        if cls.code != Refusal.code:
            table.setdefault(cls.code, cls)
    return table


def typed(error: errors.TaskflowError) -> errors.TaskflowError:
    """``error`` as its refusal class: an untyped ``TaskflowError(code=...)`` whose code is a
    refusal's becomes that class (same message and facts); anything else comes back as is."""
    if isinstance(error, Refusal) or type(error) is not errors.TaskflowError:
        return error
    cls = by_code().get(error.code)
    if cls is None:
        return error
    converted = cls.__new__(cls)
    errors.TaskflowError.__init__(converted, error.message, code=error.code, **error.facts)
    return converted
