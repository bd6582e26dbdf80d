"""``taskflow demo``: example principals, a dozen runs, weeks of past ones, a token each, a query
to paste."""

from __future__ import annotations

import argparse
import logging
from typing import Any

from taskflow import errors, logs
from taskflow.cli import runtime
from taskflow.config import config
from taskflow.service.access import tokens
from taskflow.service.common.container import Services
from taskflow.service.operate import demo

PRINCIPALS = config.PROJECT_ROOT / "examples" / "principals.json"
RUNS = config.PROJECT_ROOT / "examples" / "demo.json"

INBOX_QUERY = """{
  me { login displayName roles }
  inbox(first: 20) {
    edges { node { id label workflow runState status holder priority dueAt
                   subject { externalId } fields { name type required choices } } }
  }
}"""


def run_demo(args: argparse.Namespace) -> int:
    settings = config.load()
    logs.configure(logging.WARNING)  # the seeded tokens are the output; warnings only
    ttl = tokens.parse_ttl(args.ttl)
    try:
        tokens.check_ttl(ttl, settings.token_max_ttl)
    except errors.ValidationError as exc:
        runtime.fail(exc.message)
        return 2
    records, data = demo.read(PRINCIPALS, RUNS)

    async def go(svc: Services) -> tuple[demo.Seeded, dict[str, str]]:
        seeded = await demo.seed(svc, records, data)
        now = svc.clock.now()
        minted = {p.id: svc.staff_tokens.mint(p.id, now, ttl) for p in seeded.principals}
        return seeded, minted

    seeded, minted = runtime.on_services(settings, go, record_definitions=True)
    print(f"taskflow demo: {seeded.started} runs started, {seeded.existing} already there.")
    print(
        f"Past runs for the SLA report (/reports/sla): {seeded.past_started} played at their "
        f"own instants of the last weeks, {seeded.past_existing} already there.\n"
    )
    print("Tokens (send as 'Authorization: Bearer <token>'):")
    for principal in seeded.principals:
        roles = ", ".join(principal.roles)
        powers = "; ".join(g.describe() for g in principal.powers)
        print(
            f"  {principal.id:<9} {principal.display_name:<26} [{roles}]"
            + (f" ({powers})" if powers else "")
        )
        print(f"            {minted[principal.id]}")
    print(
        f"\nOpen {settings.public_url}/graphql (taskflow serve), set the header\n"
        f'  {{"Authorization": "Bearer {minted["fiona"]}"}}\n'
        "and run Fiona's inbox:\n"
    )
    print(INBOX_QUERY)
    return 0


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "demo", help="Load demo principals and runs of the examples; print a token for each."
    )
    parser.add_argument("--ttl", default="7d", help="Lifetime of the printed tokens (default 7d).")
    parser.set_defaults(handler=run_demo)
