"""The breach forecast's model (``core/reports/forecast.py``) on one busy slot name.

    python bench/forecast.py [--peers N] [--live L]

Builds N ended peers (default 5 000) and L live slots (default 1 000, the most
``work(orderBy: BREACH_RISK)`` ranks) of one slot name, then times, beside each other,
``forecast_many`` (the pool of the name built once: queues at opening, hour bands and the
cohorts' sorted shares) and one ``forecast`` per slot building its own pool (the
baseline, timed on a few slots and scaled). Prints both in ms and their ratio. Pure
Python, no database.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

_HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _HERE]
ROOT = _HERE.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from taskflow.core.reports import forecast  # noqa: E402

KEY = ("expense-approval", "submitted", "finance_review")
NOW = datetime(2026, 12, 1, 9, tzinfo=UTC)


def dataset(peers: int, live: int) -> tuple[list[forecast.Peer], list[forecast.Peer]]:
    rng = random.Random(7)
    hour = timedelta(hours=1)
    past = []
    for _ in range(peers):
        opened = NOW - timedelta(minutes=rng.randrange(8 * 7 * 24 * 60))
        took = rng.expovariate(1 / 3) * hour
        ended = min(opened + took, NOW - timedelta(seconds=1))
        past.append(forecast.Peer(KEY, opened, opened + 4 * hour, ended, took > 4 * hour))
    now_live = [
        forecast.Peer(
            KEY, NOW - rng.random() * 4 * hour, NOW + rng.random() * 4 * hour, None, False
        )
        for _ in range(live)
    ]
    return past, now_live


def pool_per_slot(
    slots: list[forecast.Peer], past: list[forecast.Peer], live: list[forecast.Peer]
) -> None:
    """The baseline: each slot's forecast building its own pool of peers."""
    for slot in slots:
        forecast.forecast(slot, past, live, NOW)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--peers", type=int, default=5000)
    parser.add_argument("--live", type=int, default=1000)
    parser.add_argument("--baseline-slots", type=int, default=5, help="slots the baseline times")
    args = parser.parse_args()
    past, live = dataset(args.peers, args.live)
    t0 = time.perf_counter()
    forecast.forecast_many(live, past, live, NOW)
    many = (time.perf_counter() - t0) * 1000
    t0 = time.perf_counter()
    pool_per_slot(live[: args.baseline_slots], past, live)
    # The baseline times a few slots: scaled to all of them (it is linear in the slots).
    base = (time.perf_counter() - t0) * 1000 * args.live / args.baseline_slots
    print(f"forecast_many {args.live} live over {args.peers} peers: {many:.0f} ms")
    print(f"a pool per slot (baseline, scaled from {args.baseline_slots} slots): {base:.0f} ms")
    print(f"ratio baseline / forecast_many: {base / many:.0f}x")


if __name__ == "__main__":
    main()
