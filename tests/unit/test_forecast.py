"""The breach forecast's pure model (core/reports/forecast.py): cohorts, reasons, backtest."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from taskflow.core.reports import forecast

KEY = ("expense-approval", "submitted", "finance_review")
#: A Tuesday morning.
T0 = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)
H = timedelta(hours=1)


def peer(opened: datetime, took: float, breached: bool, budget: float = 4) -> forecast.Peer:
    return forecast.Peer(KEY, opened, opened + budget * H, opened + took * H, breached)


def history(slow: int, fast: int, start: datetime = T0 - timedelta(days=14)) -> list[forecast.Peer]:
    """``fast`` slots done in 1 h of a 4 h budget (met), ``slow`` in 6 h (breached); all
    opened on weekday mornings, one a day apart."""
    out = []
    for i in range(fast + slow):
        opened = start + timedelta(days=i % 10, minutes=i)
        out.append(peer(opened, 6 if i < slow else 1, i < slow))
    return out


def test_not_enough_history_says_so_and_gives_no_probability() -> None:
    live = forecast.Peer(KEY, T0, T0 + 4 * H, None, False)
    risk = forecast.forecast(live, history(2, 3), [live], T0 + H, min_history=20)
    assert risk.probability is None
    assert risk.reason.startswith("not enough history: 5 past slots")


def test_survivors_at_the_same_share_decide() -> None:
    """At 2 h of 4 h, the fast ones (done in 1 h) are gone: every survivor breached."""
    past = history(slow=12, fast=30)
    live = forecast.Peer(KEY, T0, T0 + 4 * H, None, False)
    early = forecast.forecast(live, past, [live], T0 + 0.5 * H)
    late = forecast.forecast(live, past, [live], T0 + 2 * H)
    assert early.probability is not None
    assert 0 < early.probability < 1
    assert early.probability == early.breached / early.survivors
    assert late.probability == 1.0
    assert late.survivors == late.breached >= 10
    assert f"{late.breached} of {late.breached} past slots" in late.reason
    assert "50 %" in late.reason
    assert late.hour_band == "weekday morning"


def test_the_hour_band_narrows_when_it_has_enough() -> None:
    """Evening slots all breach, morning ones never do: an evening slot reads the evenings."""
    mornings = [peer(T0 - timedelta(days=d), 1, False) for d in range(1, 16)]
    evenings = [peer(T0 - timedelta(days=d) + 10 * H, 6, True) for d in range(1, 16)]
    live = forecast.Peer(KEY, T0 + 10 * H, T0 + 14 * H, None, False)
    risk = forecast.forecast(live, mornings + evenings, [live], T0 + 10 * H, min_samples=10)
    assert risk.hour_band == "weekday evening"
    assert risk.cohort.startswith("opened weekday evening")
    assert risk.probability == 1.0


def test_load_is_the_queue_against_the_usual() -> None:
    past = history(slow=10, fast=20)
    crowd = [forecast.Peer(KEY, T0 - H, T0 + 3 * H, None, False) for _ in range(5)]
    live = forecast.Peer(KEY, T0, T0 + 4 * H, None, False)
    risk = forecast.forecast(live, past, [live, *crowd], T0 + H)
    assert risk.queue == 5
    assert risk.load == "busy"


def test_backtest_scores_against_what_happened() -> None:
    """Four weeks of slots: a third breach. At half the budget only the slow ones are open,
    so once enough history ended every flagged slot is a breach (precision 1)."""
    past = [
        peer(T0 - timedelta(weeks=4) + timedelta(hours=8 * i), 6 if i % 3 == 0 else 1, i % 3 == 0)
        for i in range(84)
    ]
    found = forecast.backtest(past, T0, weeks=4, min_history=10, min_samples=5)
    assert found.forecast == 28  # the slow ones: open at 2 h of their 4 h
    assert found.false_positive == 0
    assert found.true_negative == 0
    assert found.precision == 1.0
    assert found.true_positive + found.false_negative + found.no_history == 28
    assert found.recall is not None
    assert found.recall > 0.5


def test_backtest_with_no_breach_has_no_precision_or_recall() -> None:
    past = [peer(T0 - timedelta(days=d), 1, False) for d in range(1, 20)]
    found = forecast.backtest(past, T0, weeks=2)
    assert found.precision is None
    assert found.recall is None


def test_past_its_due_instant_it_has_breached() -> None:
    live = forecast.Peer(KEY, T0, T0 + 4 * H, None, False)
    risk = forecast.forecast(live, history(slow=10, fast=20), [live], T0 + 5 * H)
    assert (risk.probability, risk.cohort) == (1.0, "breached")
    assert risk.reason == "past its due instant (125 % of its budget): breached"


def test_the_pools_queues_are_the_pairwise_count() -> None:
    past = history(slow=15, fast=25)
    live = [forecast.Peer(KEY, T0 - i * H, T0 + 3 * H, None, False) for i in range(4)]
    pool = forecast.pool_of(KEY, past, live)
    everyone = [*past, *live]
    for p in pool.peers:
        naive = forecast.queue_at(p.opened_at, (o for o in everyone if o is not p))
        assert pool.depths[id(p)] == naive
