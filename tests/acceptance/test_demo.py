"""`taskflow demo` as a newcomer runs it: populated inboxes in a minute."""

from __future__ import annotations

import re
import signal
import time
from datetime import UTC, datetime, timedelta

import pytest

from tests.acceptance.conftest import Deployment

pytestmark = pytest.mark.slow

INBOX = "{ inbox(first: 50) { edges { node { label workflow status holder } } } }"
#: The last 60 days, by week: the demo's history covers the last five weeks.
HISTORY = """{ slaReport(from: "%s", groupBy: [PERIOD], period: WEEK,
                         zone: "uk-london") { rows { periodLabel opened met breached } } }"""


EXPIRED_VENDORS = """{ runs(first: 10, filter: {workflow: "vendor-onboarding", state: "expired"}) {
  edges { node { subject { externalId } slots(allStates: true) { name outcome } } } } }"""


def tokens_from(output: str) -> dict[str, str]:
    found = re.findall(r"^  (\w+) .*\n\s+(\S+)$", output, flags=re.MULTILINE)
    return dict(found)


def test_demo_seeds_once_and_its_tokens_show_populated_inboxes(deployment: Deployment) -> None:
    first = deployment.run("demo")
    assert first.returncode == 0, first.stderr
    assert "15 runs started, 0 already there" in first.stdout
    assert "92 played at their own instants of the last weeks, 0 already there" in first.stdout
    assert "inbox(first: 20)" in first.stdout
    again = deployment.run("demo")
    assert "0 runs started, 15 already there" in again.stdout
    assert "0 played at their own instants of the last weeks, 92 already there" in again.stdout
    tokens = tokens_from(again.stdout)
    assert {"ada", "fiona", "sasha", "olga", "lee", "seb"} <= set(tokens)

    server = deployment.serve()
    try:
        fiona = deployment.graphql(INBOX, tokens["fiona"]).json()["data"]["inbox"]["edges"]
        labels = [edge["node"]["label"] for edge in fiona]
        # Sam's and Sid's open claims; Frank's claimed one is not hers.
        assert "Review expense EXP-2026-0101: 84.50 GBP" in labels
        assert not any("EXP-2026-0103" in label for label in labels)
        frank = deployment.graphql(INBOX, tokens["frank"]).json()["data"]["inbox"]["edges"]
        held = [e["node"]["label"] for e in frank if e["node"]["holder"] == "frank"]
        # Of the dozen live runs, he holds one (the history's backlog may add more).
        assert [x for x in held if "EXP-2026-01" in x] == [
            "Review expense EXP-2026-0103: 312.00 GBP"
        ]
        # A vendor handling personal data waits on its security assessment, a child run
        # of its own that Seb holds.
        seb = deployment.graphql(INBOX, tokens["seb"]).json()["data"]["inbox"]["edges"]
        assert [(e["node"]["label"], e["node"]["holder"]) for e in seb] == [
            ("Assess the security of Globex Data Services BV (V-20934)", "seb")
        ]
        # A withdrawn hire (H-1042): laptop and accounts were done, so IT undoes them, the
        # last done first; H-1043's laptop and accounts are still to do.
        ivan = deployment.graphql(INBOX, tokens["ivan"]).json()["data"]["inbox"]["edges"]
        assert sorted(e["node"]["label"] for e in ivan) == [
            "Close the accounts for Grace Hopper (starts 2027-01-04)",
            "Collect the laptop for Grace Hopper (starts 2027-01-04)",
            "Open the accounts for Alan Turing (starts 2027-01-11)",
            "Ship a laptop for Alan Turing (starts 2027-01-11)",
        ]
        sasha = deployment.graphql(INBOX, tokens["sasha"]).json()["data"]["inbox"]["edges"]
        assert {e["node"]["workflow"] for e in sasha} == {"support-ticket"}
        max_ = deployment.graphql(INBOX, tokens["max"]).json()["data"]["inbox"]["edges"]
        assert [e["node"]["label"] for e in max_ if "EXP-2026-01" in e["node"]["label"]] == [
            "Approve EXP-2026-0102 by sam: 1,890.00 GBP"
        ]
        # Weeks of history for the SLA report: slots met and breached over five weeks.
        since = (datetime.now(UTC) - timedelta(days=60)).isoformat()
        report = deployment.graphql(HISTORY % since, tokens["max"]).json()["data"]["slaReport"][
            "rows"
        ]
        busy = [r for r in report if r["opened"] > 0]
        assert len(busy) >= 5, report
        assert sum(r["met"] for r in busy) > 50
        assert sum(r["breached"] for r in busy) > 5
        # The vendors who sent one document of two: the server's worker expires the other
        # request on its first pass, and the onboarding ends as expired.
        expired: list[dict[str, object]] = []
        for _ in range(100):
            found = deployment.graphql(EXPIRED_VENDORS, tokens["olga"]).json()["data"]["runs"]
            expired = found["edges"]
            if len(expired) == 2:
                break
            time.sleep(0.1)  # the worker process's first pass, not a deadline
        assert len(expired) == 2, expired
        outcomes = sorted(s["outcome"] for e in expired for s in e["node"]["slots"])
        assert outcomes.count("expired") == 2, outcomes
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=30)
