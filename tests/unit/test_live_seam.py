"""A resumed subscription (taskflow/service/live/hub.py): the replay goes out first, then
the live batches held meanwhile, without what the replay already told."""

from __future__ import annotations

from typing import Any

from taskflow.service.live import topics
from taskflow.service.live.subscribers import Change, Group, Subscription
from taskflow.store.live.live import Line


def _resumed(after: int) -> Subscription:
    group = Group(topics.Topic(topics.INBOX), actor=None)  # type: ignore[arg-type]
    return Subscription(lambda _: None, group, max_queued=10, dropped=lambda: None, after=after)


def _queued(sub: Subscription) -> list[tuple[int, str, Any]]:
    out = []
    while not sub._queue.empty():
        change = sub._queue.get_nowait()
        assert change is not None
        out.append((change.cursor, change.key, change.row))
    return out


def _line(id: int, run: str) -> Line:
    return Line(id, run, None, "slot.claimed", "expense-approval")


def test_a_live_batch_the_replay_already_read_is_not_told_again() -> None:
    sub = _resumed(after=5)
    # Read live while the replay was being read: the same line 8, an older state.
    sub.offer([Change(7, "s1", "claimed", "r1")], [_line(8, "r1")])
    sub.replayed([Change(7, "s1", "done", "r1")], frozenset({6, 8}))
    assert _queued(sub) == [(7, "s1", "done")]


def test_a_live_batch_with_a_newer_line_follows_the_replay() -> None:
    sub = _resumed(after=5)
    sub.offer([Change(9, "s1", "done", "r1")], [_line(8, "r1"), _line(9, "r1")])
    sub.replayed([Change(7, "s1", "claimed", "r1")], frozenset({6, 8}))
    sub.offer([Change(9, "s2", "open", "r2")], [_line(10, "r2")])
    assert _queued(sub) == [(7, "s1", "claimed"), (9, "s1", "done"), (9, "s2", "open")]


def test_no_change_goes_out_with_a_cursor_older_than_the_one_resumed_from() -> None:
    sub = _resumed(after=20)
    sub.replayed([], frozenset())
    sub.offer([Change(12, "s1", "open", "r1")], [_line(21, "r1")])
    assert _queued(sub) == [(20, "s1", "open")]
