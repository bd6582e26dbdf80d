"""The SLA report's statement by grouping: named statements of ``report_sql.sql`` whose
dynamic parts (groupings, the period grid) are composed from the fixed list ``KEYS``."""

from __future__ import annotations

import itertools
import re
from datetime import UTC, datetime

import pytest

from taskflow.core.reports import reports
from taskflow.store.common.sql_builder import BuildError, compose
from taskflow.store.reports import report_sql

EVIL = "x'); DROP TABLE slot; --"
FROM = datetime(2026, 11, 2, tzinfo=UTC)
TO = datetime(2026, 11, 30, tzinfo=UTC)
NOW = datetime(2026, 11, 20, tzinfo=UTC)
MEASURED = "WITH m AS (SELECT 1)"


def test_compose_fills_every_marker_once_and_nothing_else() -> None:
    assert compose("SELECT /*:a*/ FROM /*:b*/", a="x", b="t") == "SELECT x FROM t"
    with pytest.raises(BuildError, match="differ"):
        compose("SELECT /*:a*/ FROM /*:b*/", a="x")
    with pytest.raises(BuildError, match="differ"):
        compose("SELECT /*:a*/", a="x", b="t")


def test_no_grouping_is_one_row_of_totals() -> None:
    text = report_sql.grouping((), measured=MEASURED)
    assert text.index(MEASURED) < text.index("agg AS")
    assert "GROUP BY" not in text
    assert text.endswith("SELECT * FROM agg ORDER BY 1")


def test_groupings_number_their_positions_and_order_nulls_last() -> None:
    text = report_sql.grouping((reports.WORKFLOW, reports.HOLDER), measured=MEASURED)
    assert "m.workflow AS k_workflow, m.holder AS k_holder," in text
    assert "GROUP BY 1, 2" in text
    assert text.endswith("ORDER BY k_workflow NULLS LAST, k_holder NULLS LAST")


def test_by_period_the_grid_crosses_every_period_with_every_group_seen() -> None:
    bounds = "$12::timestamptz[]"
    alone = report_sql.grouping((), measured=MEASURED, bounds=bounds)
    assert "width_bucket(m.opened_at, $12::timestamptz[]) AS k_period" in alone
    assert "GROUP BY 1\n" in alone
    assert "generate_series(1, cardinality($12::timestamptz[]))" in alone
    assert "gid" not in alone
    text = report_sql.grouping((reports.STATE, reports.PRIORITY), measured=MEASURED, bounds=bounds)
    assert "GROUP BY 1, 2, 3" in text  # the period's number first
    assert "dense_rank() OVER (ORDER BY k_state, k_priority) AS gid" in text
    assert "a.k_period = p.k_period AND a.gid = g.gid" in text
    assert "($12::timestamptz[])[p.k_period] AS k_period, g.k_state, g.k_priority," in text
    assert text.endswith("ORDER BY p.k_period, g.k_state NULLS LAST, g.k_priority NULLS LAST")


def test_groupings_come_only_from_the_fixed_list() -> None:
    with pytest.raises(BuildError, match="not among"):
        report_sql.grouping((EVIL,), measured=MEASURED)
    assert set(report_sql.KEYS) == set(reports.DIMENSIONS) - {reports.PERIOD}


@pytest.mark.parametrize(
    "group_by",
    [
        combo
        for n in (0, 1, 2, len(reports.DIMENSIONS))
        for combo in itertools.combinations(reports.DIMENSIONS, n)
    ],
)
def test_every_grouping_fills_its_statement_and_takes_values_as_parameters(
    group_by: tuple[str, ...],
) -> None:
    f = reports.ReportFilter(
        workflow=EVIL, state=EVIL, slot=EVIL, audience=(EVIL,), holder=EVIL, priority=2
    )
    request = reports.ReportRequest(FROM, TO, group_by, "assigned", "week", "UTC", f)
    text, args = report_sql.statement(request, NOW, {EVIL: None}, {}, 0.2)
    assert EVIL not in text
    assert not re.search(r"/\*:\w+\*/", text), "a marker was left unfilled"
    placeholders = {int(n) for n in re.findall(r"\$(\d+)", text)}
    assert placeholders == set(range(1, len(args) + 1))
    if request.by_period:
        assert f"${len(args)}::timestamptz[]" in text  # the periods' first instants, last
        assert args[-1] == reports.period_starts(request)
