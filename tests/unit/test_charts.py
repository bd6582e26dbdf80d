"""The report page's SVG charts: series a reader can tell apart."""

from __future__ import annotations

import itertools
import re

from taskflow.api import charts


def test_no_two_series_look_alike() -> None:
    assert len(set(charts.PALETTE)) == len(charts.PALETTE)
    assert len({colour for colour, _, _ in charts.PALETTE}) == len(charts.PALETTE)
    assert len({(dash, marker) for _, dash, marker in charts.PALETTE}) == len(charts.PALETTE)


def test_a_chart_keeps_the_busiest_groups_in_their_order() -> None:
    opened = {f"team-{n:02d}": n % 5 + n / 100 for n in range(12)}
    labels = sorted(opened)
    kept = charts.busiest(labels, opened.__getitem__)
    assert len(kept) == len(charts.PALETTE) == 8
    assert kept == sorted(kept)
    assert min(opened[k] for k in kept) >= max(opened[k] for k in labels if k not in kept)
    few = labels[:3]
    assert charts.busiest(few, opened.__getitem__) == few


def test_every_line_of_a_chart_has_its_own_style() -> None:
    series = [charts.Series(f"team-{n}", (0.1 * n, 0.2)) for n in range(len(charts.PALETTE))]
    svg = charts.line_chart("Breach rate", ["w1", "w2"], series)
    strokes = {colour for colour, _, _ in charts.PALETTE if f'stroke="{colour}"' in svg}
    assert len(strokes) == len(charts.PALETTE)


def test_x_labels_never_overlap() -> None:
    days = [f"2026-11-{d:02d}" for d in range(1, 31)]
    svg = charts.line_chart("Breach rate", days, [charts.Series("a", (0.5,) * 30)])
    shown = re.findall(r'<text x="([\d.]+)" y="[\d.]+" text-anchor="middle">([^<]+)<', svg)
    assert shown[0][1] == "2026-11-01"
    xs = [float(x) for x, _ in shown]
    assert len(xs) >= 5
    assert min(b - a for a, b in itertools.pairwise(xs)) >= 7 * len("2026-11-01")
