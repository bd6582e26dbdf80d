"""Human labels of slots: ``"Review expense {subject.reference}: {subject.amount:.2f}"``.

Placeholders are paths from ``subject``, ``item``, ``payload`` or ``result`` (what
automatic steps returned) with an
optional Python format spec; ``{{`` and ``}}`` are literal braces. A value that
is missing renders visibly as ``{?subject.reference}`` so a bad label is seen
in the inbox, never a crash.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final

from taskflow.core.definition.conditions import expr as ex

_PLACEHOLDER: Final = re.compile(r"\{\{|\}\}|\{([^{}:]*)(?::([^{}]*))?\}")


def placeholders(template: str) -> tuple[str, ...]:
    """The dotted paths a template reads, in order (``subject.reference``, ``item``)."""
    return tuple(
        m.group(1).strip() for m in _PLACEHOLDER.finditer(template) if m.group(1) is not None
    )


def _ref(path: str) -> ex.Ref | None:
    root, *parts = path.split(".")
    if root not in ex.ROOTS or not all(p.isidentifier() for p in parts):
        return None
    return ex.Ref(root, tuple(parts))


def refs(template: str) -> tuple[ex.Ref | str, ...]:
    """Each placeholder as a reference, or as its raw text when it is not a valid path."""
    found: list[ex.Ref | str] = []
    for path in placeholders(template):
        ref = _ref(path)
        found.append(path if ref is None else ref)
    return tuple(found)


def _format(value: Any, spec: str | None) -> str:
    if isinstance(value, bool):
        value = "yes" if value else "no"
    if spec:
        try:
            return format(value, spec)
        except (ValueError, TypeError):
            pass  # a spec that does not fit the value: show the value as it is
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, list):
        return ", ".join(_format(v, None) for v in value)
    return str(value)


def render_label(
    template: str,
    subject: Mapping[str, Any],
    item: Any = ex.MISSING,
    payload: Mapping[str, Any] | None = None,
    result: Mapping[str, Any] | None = None,
) -> str:
    """The label for one slot; missing values appear as ``{?path}``."""
    env = ex.Env(subject=subject, item=item, payload=payload or {}, result=result or {})

    def replace(match: re.Match[str]) -> str:
        whole, path, spec = match.group(0), match.group(1), match.group(2)
        if path is None:
            return whole[0]  # {{ or }}
        ref = _ref(path.strip())
        value = ex.resolve(ref, env) if ref is not None else ex.MISSING
        if value is ex.MISSING or value is None:
            return "{?" + path.strip() + "}"
        return _format(value, spec)

    return _PLACEHOLDER.sub(replace, template)
