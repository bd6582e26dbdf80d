"""Insights as people read them: durations, percentiles with their sample size when few,
rates in percent; the one wording of ``taskflow insights`` and the report page (pure)."""

from __future__ import annotations

from taskflow.core.history.regressions import percent

#: Percentiles over fewer samples than this are flagged as such (their number is shown).
FEW = 20


def duration(seconds: float | None) -> str:
    """``90`` -> ``1.5m``, ``7200`` -> ``2.0h``; ``-`` for none."""
    if seconds is None:
        return "-"
    for size, unit in ((86400, "d"), (3600, "h"), (60, "m")):
        if seconds >= size:
            return f"{seconds / size:.1f}{unit}"
    return f"{seconds:.0f}s"


def percentiles(values: tuple[float, ...] | None, samples: int, count: int = 3) -> str:
    """``p50 / p95 / p99``, with ``(n=N)`` when fewer than :data:`FEW` samples back them."""
    shown = " / ".join(duration(v) for v in (values or (None,) * count))
    return shown + (f" (n={samples})" if samples < FEW else "")


def rate(part: int, whole: int) -> str:
    """``part`` of ``whole`` as a whole percent (``-``: nothing to take a share of)."""
    found = percent(part, whole)
    return "-" if found is None else f"{found:.0f}%"


def rate_of(part: int, whole: int) -> str:
    """:func:`rate`, with ``(n=N)`` when fewer than :data:`FEW` make the whole: one of five
    is 20 %, which says less than 20 % of five hundred."""
    shown = rate(part, whole)
    return shown + (f" (n={whole})" if 0 < whole < FEW else "")
