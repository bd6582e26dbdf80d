"""A bar chart's legend swatch is drawn exactly as its series' bars are.

Before, the second series' bars were lighter (fill-opacity .55, to part them in a grey
print) while its swatch was drawn at full strength, so the legend did not match.
"""

from __future__ import annotations

import re

from taskflow.api import charts, report_table


def test_each_swatch_has_its_bars_fill_and_opacity() -> None:
    svg = charts.bar_chart(
        "p90",
        ["expense", "vendor"],
        [charts.Series("pickup", (1.0, 2.0)), charts.Series("completion", (3.0, 4.0))],
        unit="h",
    )
    rects = re.findall(r"<rect ([^>]*)/>", svg)
    swatches = [r for r in rects if 'y="24"' in r]
    bars = [r for r in rects if 'y="24"' not in r]

    def paint(attrs: str) -> tuple[str, str]:
        fill = re.search(r'fill="([^"]+)"', attrs)
        opacity = re.search(r'fill-opacity="([^"]+)"', attrs)
        return (fill.group(1) if fill else "", opacity.group(1) if opacity else "1")

    assert len(swatches) == 2
    for n, swatch in enumerate(swatches):
        series_bars = bars[n::2]
        assert {paint(b) for b in series_bars} == {paint(swatch)}
    assert paint(swatches[0]) != paint(swatches[1])


def test_the_pages_columns_group_under_headers_that_name_sums() -> None:
    columns = report_table.columns_of(["lead"])
    assert [c.head for c in columns] == ["lead time", "worked", "waiting"]
    assert report_table.header_groups(columns) == [("sum over the slots (real h)", 3)]
    assert all("sum" in c.title for c in columns)  # and so in the CSV's header
    assert report_table.columns_of(None) == report_table.columns_of(["nonsense"])
    assert {c.group for c in report_table.columns_of(None)} == set(report_table.DEFAULT_GROUPS)
