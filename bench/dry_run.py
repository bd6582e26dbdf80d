"""SLA dry runs: a 50-event timeline played through the support example, against the raw
clock arithmetic of the same timeline.

    python bench/dry_run.py [--events 50] [--rounds 200]

The timeline: a ticket started Monday 09:00, triaged, picked up, then cycles of a priority
change (a recompute), asking the customer (a pause), the customer's reply (a resume) and
the priority back, every 40 minutes, then an end a week on (the reminders and breaches fire
between events). The dry run plays it whole (``service/clocks/dry_run.play_file``: events
read and checked, the engine, the planner, the timers fired, the answer as JSON), which is
what ``slaDryRun`` and ``taskflow sla dry-run`` do. The baseline is the arithmetic alone:
the three clocks' ledgers built by hand for the same instants, and after every event each
due instant and its calendar walk (``clocks.due_at``, ``clocks.explain``): what any dry run
must compute at least. Prints the median and p99 per run in ms, the ratio, and the target
(a 50-event dry run in at most 50 ms).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

_HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _HERE]
ROOT = _HERE.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from taskflow.core.clocks import clocks  # noqa: E402
from taskflow.core.definition import budgets as bu  # noqa: E402
from taskflow.service.clocks import calendar_files  # noqa: E402
from taskflow.service.clocks import dry_run as service  # noqa: E402
from taskflow.service.versions import definitions  # noqa: E402

START = datetime(2026, 12, 7, 9, tzinfo=UTC)  # a Monday
TICKET = {
    "reference": "T-1",
    "title": "Cannot export invoices",
    "priority": "P2",
    "team": "billing-support",
    "customer_email": "ana@example.com",
}
CYCLE = ("P3", "ask", "reply", "P2")


def timeline(count: int) -> list[dict[str, Any]]:
    """``count`` events: start, triage, claim, the cycles, an end a week on."""
    at = START

    def stamp(minutes: int) -> str:
        return (at + timedelta(minutes=minutes)).isoformat()

    events: list[dict[str, Any]] = [
        {"at": stamp(0), "kind": "start"},
        {"at": stamp(10), "kind": "complete", "slot": "triage",
         "payload": {"priority": "P2", "category": "bug"}},
        {"at": stamp(20), "kind": "claim", "slot": "first_response", "by": "sasha"},
    ]  # fmt: skip
    minute = 20
    for i in range(count - 4):
        minute += 40
        step = CYCLE[i % len(CYCLE)]
        if step in ("P2", "P3"):
            events.append(
                {"at": stamp(minute), "kind": "subject", "attributes": {"priority": step}}
            )
        elif step == "ask":
            events.append(
                {"at": stamp(minute), "kind": "move", "name": "ask_customer", "by": "sasha",
                 "groups": ["billing-support"], "payload": {"question": "Which?"}}
            )  # fmt: skip
        else:
            events.append(
                {"at": stamp(minute), "kind": "complete", "slot": "customer_reply",
                 "payload": {"reply": "These"}}
            )  # fmt: skip
    events.append({"at": stamp(minute + 7 * 24 * 60), "kind": "end"})
    return events


def raw(events: list[dict[str, Any]], registry: Any) -> int:
    """The arithmetic alone: three ledgers moved by hand, every due instant and walk."""
    london = registry.get("uk-london")
    two_days = bu.ResolvedBudget("business", timedelta(0), "uk-london", working_days=2)
    four_hours = bu.ResolvedBudget("business", timedelta(hours=4), "uk-london")
    opened = START + timedelta(minutes=10)
    ledger = [
        clocks.start("finished", four_hours, opened),
        clocks.start("finished", two_days, opened),
        clocks.start("assigned", four_hours, opened),
    ]
    work = 0
    for e in events[3:]:
        now = datetime.fromisoformat(e["at"])
        kind = e["kind"]
        if kind == "move":
            ledger = [clocks.pause(c, now) for c in ledger]
        elif kind == "complete":
            ledger = [clocks.resume(c, now) for c in ledger]
        elif kind == "subject":
            budget = four_hours if e["attributes"]["priority"] == "P2" else two_days
            ledger = [clocks.rebudget(c, budget, now) for c in ledger]
        for c in ledger:
            clocks.due_at(c, london)
            work += len(clocks.explain(c, london))
    return work


def measure(fn: Any, rounds: int) -> tuple[list[float], list[float]]:
    """(wall ms, CPU ms) per call: the CPU time is this process's own, which a machine shared
    with other work inflates far less than the wall time."""
    fn()  # warm the calendars' compiled timelines and the definitions' caches
    wall, cpu = [], []
    for _ in range(rounds):
        t0, c0 = time.perf_counter(), time.process_time()
        fn()
        wall.append((time.perf_counter() - t0) * 1000)
        cpu.append((time.process_time() - c0) * 1000)
    return wall, cpu


def row(name: str, found: list[float]) -> str:
    p99 = statistics.quantiles(found, n=100)[98]
    return f"{name:<34}{statistics.median(found):>10.2f}{p99:>10.2f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=200)
    args = parser.parse_args()
    registry = calendar_files.load_folder(ROOT / "calendars")
    catalog = definitions.load((str(ROOT / "examples"),), registry.names())
    events = timeline(args.events)
    document = {"workflow": "support-ticket", "subject": TICKET, "events": events}
    answer = service.play_file(catalog, registry, document)
    print(
        f"{len(events)} events, {len(answer.timeline)} timeline lines, {answer.firings} "
        f"firings, {len(answer.milestones)} clocks; final state {answer.state}"
    )
    played = measure(
        lambda: service.to_json(service.play_file(catalog, registry, document)), args.rounds
    )
    bare = measure(lambda: raw(events, registry), args.rounds)
    print(f"{'':<34}{'median ms':>10}{'p99 ms':>10}")
    for label, (wall, cpu) in (("dry run (play + JSON)", played), ("raw clock arithmetic", bare)):
        print(row(f"{label}, wall", wall))
        print(row(f"{label}, CPU", cpu))
    ratio = statistics.median(played[1]) / statistics.median(bare[1])
    wall_median = statistics.median(played[0])
    cpu_p99 = statistics.quantiles(played[1], n=100)[98]
    verdict = "met" if wall_median <= 50 and cpu_p99 <= 50 else "MISSED"
    print(
        f"CPU ratio {ratio:.1f}x the raw arithmetic; target <= 50 ms (median wall, p99 CPU): "
        f"{verdict}"
    )


if __name__ == "__main__":
    main()
