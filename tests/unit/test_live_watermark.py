"""The live feed's settled cursor (taskflow/service/live/watermark.py): a cursor handed out
never passes a line that may still commit, and gaps of rolled-back lines end."""

from __future__ import annotations

from taskflow.service.live.watermark import Watermark


def test_with_no_gap_the_cursor_is_the_newest_line_read() -> None:
    mark = Watermark(10)
    mark.read([11, 12, 13], [], xmin=100, xmax=101)
    assert mark.settled == 13
    assert not mark.pending


def test_a_line_read_before_an_older_one_commits_holds_the_cursor_below_the_older() -> None:
    mark = Watermark(10)
    mark.read([12], [], xmin=100, xmax=105)  # line 11 is still being committed
    assert mark.settled == 10
    mark.read([11], [], xmin=100, xmax=106)
    assert mark.settled == 12


def test_a_gap_ends_once_its_transaction_ended_and_the_id_was_looked_up() -> None:
    mark = Watermark(10)
    mark.read([12], [], xmin=100, xmax=105)
    assert mark.lookups() == []  # the gap's horizon comes with the next read
    mark.read([13], [], xmin=100, xmax=107)
    assert mark.lookups() == [(11, 11)]
    # Looked up while a transaction older than the horizon may still run: kept.
    mark.read([], mark.lookups(), xmin=106, xmax=108)
    assert mark.settled == 10
    # Looked up once every transaction below the horizon had ended: rolled back.
    mark.read([], mark.lookups(), xmin=107, xmax=108)
    assert mark.settled == 13
    assert not mark.pending


def test_a_gap_not_looked_up_is_never_given_up_on_the_snapshot_alone() -> None:
    mark = Watermark(10)
    mark.read([12], [], xmin=100, xmax=105)
    mark.read([13], [], xmin=100, xmax=107)
    mark.read([14], [], xmin=200, xmax=201)
    assert mark.settled == 10


def test_adjacent_gaps_are_looked_up_as_one_range() -> None:
    mark = Watermark(10)
    mark.read([14, 17], [], xmin=1, xmax=2)
    mark.read([], [], xmin=1, xmax=3)
    assert mark.lookups() == [(11, 13), (15, 16)]
