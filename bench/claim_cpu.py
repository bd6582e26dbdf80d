"""CPU per claim: the raw claim-next statement against the service, client and PostgreSQL.

    python bench/claim_cpu.py --data-dir /tmp/bench-inbox [--claims 3000] [--rounds 3]

Needs the database a ``bench/inbox.py`` run kept (``bench_inbox`` on the same embedded data
dir). Wall-clock ratios on a machine shared with other work move with its load; CPU time
spent per claim does much less. For 1, 8 and 32 claimers (``--claimers``), raw and service
in turn (each run is ``bench/inbox.py``'s ``claim_run``: its own pool, claims released
after), it reads

- the client's CPU: ``time.process_time()`` of this process around the run;
- PostgreSQL's CPU: from ``/proc``, the postmaster's reaped children (``cutime + cstime``)
  plus every live child's ``utime + stime`` (backends, WAL writer, checkpointer), before
  and after the run; the run's pool closes its backends before the second reading, so
  their CPU is in the postmaster's ``cutime``. Autovacuum is off for the slot table (as in
  ``bench/inbox.py``), and nothing else uses this embedded server.

and prints µs per claim and the service's claims per CPU-second as a percentage of the raw
statement's (on a machine whose cores are saturated, as 32 claimers on 2 cores are, the
claims/s ratio follows it). ``VACUUM slot`` before each run, as ``bench/inbox.py``'s fresh
phase does.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import time
from pathlib import Path
from typing import Any

from claim_profile import load_inbox, world_of

HERE = Path(__file__).resolve().parent
TICKS = os.sysconf("SC_CLK_TCK")


def _stat(pid: int) -> list[str]:
    raw = Path(f"/proc/{pid}/stat").read_text()
    return raw[raw.rindex(")") + 2 :].split()


def postgres_cpu(postmaster: int) -> float:
    """Seconds of CPU of the postmaster's reaped children and of its live ones."""
    fields = _stat(postmaster)
    total = int(fields[13]) + int(fields[14])  # cutime, cstime (fields 16, 17)
    for entry in Path(f"/proc/{postmaster}/task/{postmaster}/children").read_text().split():
        try:
            child = _stat(int(entry))
        except FileNotFoundError:
            continue
        total += int(child[11]) + int(child[12])  # utime, stime (fields 14, 15)
    return total / TICKS


async def measure(
    inbox: Any, url: str, postmaster: int, claims: int, rounds: int, sizes: list[int]
) -> None:
    import asyncpg

    from taskflow.store.common import db

    database = await db.Database.connect(url, min_size=1, max_size=2)
    admin = await asyncpg.connect(url)
    results: dict[tuple[int, str], list[tuple[float, float]]] = {}
    try:
        await admin.execute("ALTER TABLE slot SET (autovacuum_enabled = false)")
        world = await world_of(inbox, url, database, seed=11)
        for round_ in range(rounds):
            for claimers in sizes:
                for mode in ("raw", "service"):
                    await admin.execute("VACUUM slot")
                    client, server = time.process_time(), postgres_cpu(postmaster)
                    run = await inbox.claim_run(world, mode, claimers, claims)
                    # The run's pool closed its backends: let the postmaster reap them.
                    await asyncio.sleep(0.3)
                    client = time.process_time() - client
                    server = postgres_cpu(postmaster) - server
                    per = 1e6 / max(run.claims, 1)
                    results.setdefault((claimers, mode), []).append((client * per, server * per))
                    print(
                        f"round {round_ + 1} {claimers:>2} {mode:<8} {run.claims:>5} claims "
                        f"{run.per_second:7.0f}/s  client {client * per:6.0f} us  "
                        f"postgres {server * per:6.0f} us",
                        flush=True,
                    )
    finally:
        await admin.execute("ALTER TABLE slot RESET (autovacuum_enabled)")
        await admin.close()
        await database.close()
    print("\nmean of rounds, us of CPU per claim")
    print("claimers  way        client  postgres    both   % raw (claims per CPU-second)")
    for claimers in sizes:
        both_raw = 0.0
        for mode in ("raw", "service"):
            got = results[(claimers, mode)]
            client = statistics.fmean(c for c, _ in got)
            server = statistics.fmean(s for _, s in got)
            both = client + server
            both_raw = both_raw or both
            print(
                f"{claimers:>8}  {mode:<9} {client:7.0f}  {server:8.0f}  {both:6.0f}  "
                f"{100 * both_raw / both:6.1f}"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", required=True)
    parser.add_argument("--claims", type=int, default=3000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--claimers", default="1,8,32", help="comma-separated")
    parser.add_argument("--try", dest="try_file")
    args = parser.parse_args()
    inbox = load_inbox(HERE, "bench_inbox")
    inbox.apply_try(args.try_file)
    from taskflow.store.common import embedded

    handle = embedded.EmbeddedPostgres(Path(args.data_dir))
    try:
        pid_file = Path(args.data_dir) / "pg" / "postmaster.pid"
        postmaster = int(pid_file.read_text().split()[0])
        url = inbox.with_database(handle.url(), inbox.Options.database)
        sizes = [int(n) for n in args.claimers.split(",")]
        asyncio.run(measure(inbox, url, postmaster, args.claims, args.rounds, sizes))
    finally:
        handle.stop()


if __name__ == "__main__":
    main()
