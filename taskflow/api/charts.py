"""Small server-rendered SVG charts for the report page: no script, readable printed.

Each function returns SVG markup (escaped text, fixed viewBox, scales with the
page). Series are told apart by colour *and* by dash pattern and marker
shape, so a black-and-white printout still reads.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from html import escape

#: Colour, dash pattern and marker per series: no two alike. A chart shows at most this
#: many lines (the report page picks the groups with the most slots; the table has all).
PALETTE = (
    ("#1d4ed8", "", "circle"),
    ("#b45309", "6 3", "square"),
    ("#047857", "2 3", "diamond"),
    ("#7c3aed", "10 3 2 3", "circle"),
    ("#be123c", "4 4", "square"),
    ("#0f766e", "1 2", "diamond"),
    ("#4b5563", "8 2 2 2 2 2", "square"),
    ("#a21caf", "12 4", "diamond"),
)
FONT = 'font-family="system-ui, sans-serif" font-size="12"'


@dataclass(frozen=True)
class Series:
    """One line: a name and a value per x position (None: nothing to plot there)."""

    name: str
    values: tuple[float | None, ...]


def busiest(labels: list[str], weight: Callable[[str], float]) -> list[str]:
    """At most as many ``labels`` as the palette has styles: the heaviest, in their order."""
    if len(labels) <= len(PALETTE):
        return labels
    kept = set(sorted(labels, key=lambda label: -weight(label))[: len(PALETTE)])
    return [label for label in labels if label in kept]


def _marker(kind: str, x: float, y: float, colour: str) -> str:
    if kind == "square":
        return f'<rect x="{x - 3.5:.1f}" y="{y - 3.5:.1f}" width="7" height="7" fill="{colour}"/>'
    if kind == "diamond":
        return (
            f'<path d="M{x:.1f} {y - 5:.1f} L{x + 5:.1f} {y:.1f} L{x:.1f} {y + 5:.1f} '
            f'L{x - 5:.1f} {y:.1f} Z" fill="{colour}"/>'
        )
    return f'<circle cx="{x:.1f}" cy="{y:.1f}" r="4" fill="{colour}"/>'


def line_chart(
    title: str, labels: list[str], series: list[Series], *, y_max: float = 1.0, percent: bool = True
) -> str:
    """Lines over labelled x positions (e.g. breach rate per period per group)."""
    width, left, right, top = 720, 48, 40, 28  # right: half of the last x label
    plot_h = 200
    legend_h = 18 * ((len(series) + 2) // 3)
    height = top + plot_h + 40 + legend_h
    plot_w = width - left - right
    step = plot_w / max(len(labels) - 1, 1)

    def x_of(i: int) -> float:
        return left + (i * step if len(labels) > 1 else plot_w / 2)

    def y_of(v: float) -> float:
        return top + plot_h - (v / y_max) * plot_h if y_max else top + plot_h

    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" role="img" '
        f'aria-label="{escape(title)}" class="chart" {FONT}>',
        f'<text x="{left}" y="16" font-weight="600">{escape(title)}</text>',
    ]
    for k in range(5):
        tick = y_max * k / 4
        y = y_of(tick)
        text = f"{tick * 100:.0f} %" if percent else f"{tick:g}"
        out.append(
            f'<line x1="{left}" x2="{width - right}" y1="{y:.1f}" y2="{y:.1f}" stroke="#ccc"/>'
        )
        out.append(f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end">{text}</text>')
    # Every label that fits: about 7 px a character at this size, and a gap.
    widest = 7 * max((len(label) for label in labels), default=0) + 10
    every = max(1, math.ceil(widest / step)) if len(labels) > 1 else 1
    for i, label in enumerate(labels):
        if i % every == 0:
            out.append(
                f'<text x="{x_of(i):.1f}" y="{top + plot_h + 16}" text-anchor="middle">'
                f"{escape(label)}</text>"
            )
    for n, s in enumerate(series):
        colour, dash, marker = PALETTE[n % len(PALETTE)]
        runs: list[list[tuple[float, float]]] = [[]]
        for i, v in enumerate(s.values):
            if v is None:
                runs.append([])
            else:
                runs[-1].append((x_of(i), y_of(v)))
        for run in runs:
            if len(run) > 1:
                points = " ".join(f"{x:.1f},{y:.1f}" for x, y in run)
                out.append(
                    f'<polyline points="{points}" fill="none" stroke="{colour}" '
                    f'stroke-width="2" stroke-dasharray="{dash}"/>'
                )
            out.extend(_marker(marker, x, y, colour) for x, y in run)
        lx = left + (n % 3) * 220
        ly = top + plot_h + 36 + 18 * (n // 3)
        out.append(
            f'<line x1="{lx}" x2="{lx + 24}" y1="{ly - 4}" y2="{ly - 4}" stroke="{colour}" '
            f'stroke-width="2" stroke-dasharray="{dash}"/>'
        )
        out.append(_marker(marker, lx + 12, ly - 4, colour))
        out.append(f'<text x="{lx + 30}" y="{ly}">{escape(s.name)}</text>')
    out.append("</svg>")
    return "".join(out)


def bar_chart(
    title: str,
    labels: list[str],
    series: list[Series],
    *,
    unit: str | tuple[str, str],
    fmt: str = "{:.1f}",
) -> str:
    """Horizontal bars, one group per label and one bar per series, values written at the end
    with their ``unit`` (a (singular, plural) pair for counts: "1 slot", "2 slots")."""
    width, left, right = 720, 170, 80
    bar_h, gap = 14, 10
    group_h = bar_h * len(series) + gap
    top = 28 + 18
    height = top + group_h * len(labels) + 10
    peak = max((v for s in series for v in s.values if v is not None), default=0.0) or 1.0
    plot_w = width - left - right
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" role="img" '
        f'aria-label="{escape(title)}" class="chart" {FONT}>',
        f'<text x="0" y="16" font-weight="600">{escape(title)}</text>',
    ]
    for n, s in enumerate(series):
        colour = PALETTE[n % len(PALETTE)][0]
        lx = left + n * 200
        # The swatch is drawn exactly as the series' bars are (same fill, same opacity).
        out.append(f'<rect x="{lx}" y="24" width="12" height="12" fill="{colour}"{_opacity(n)}/>')
        out.append(f'<text x="{lx + 18}" y="34">{escape(s.name)}</text>')
    for i, label in enumerate(labels):
        y0 = top + i * group_h
        out.append(
            f'<text x="{left - 8}" y="{y0 + group_h / 2:.1f}" text-anchor="end">'
            f"{escape(label)}</text>"
        )
        for n, s in enumerate(series):
            v = s.values[i]
            colour = PALETTE[n % len(PALETTE)][0]
            y = y0 + n * bar_h
            w = 0.0 if v is None else plot_w * v / peak
            out.append(
                f'<rect x="{left}" y="{y}" width="{w:.1f}" height="{bar_h - 2}" '
                f'fill="{colour}"{_opacity(n)}/>'
            )
            text = "-" if v is None else f"{fmt.format(v)} {_unit(unit, fmt.format(v))}"
            out.append(f'<text x="{left + w + 6:.1f}" y="{y + bar_h - 4}">{escape(text)}</text>')
    out.append("</svg>")
    return "".join(out)


def _opacity(n: int) -> str:
    """A lighter fill on every other series keeps bars apart in a greyscale print."""
    return ' fill-opacity=".55"' if n % 2 else ""


def _unit(unit: str | tuple[str, str], written: str) -> str:
    if isinstance(unit, str):
        return unit
    return unit[0] if written == "1" else unit[1]
