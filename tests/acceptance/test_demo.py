"""`taskflow demo` as a newcomer runs it: populated inboxes in a minute."""

from __future__ import annotations

import re
import signal

import pytest

from tests.acceptance.conftest import Deployment

pytestmark = pytest.mark.slow

INBOX = "{ inbox(first: 50) { edges { node { label workflow status holder } } } }"


def tokens_from(output: str) -> dict[str, str]:
    found = re.findall(r"^  (\w+) .*\n\s+(\S+)$", output, flags=re.MULTILINE)
    return dict(found)


def test_demo_seeds_once_and_its_tokens_show_populated_inboxes(deployment: Deployment) -> None:
    first = deployment.run("demo")
    assert first.returncode == 0, first.stderr
    assert "12 runs started, 0 already there" in first.stdout
    assert "inbox(first: 20)" in first.stdout
    again = deployment.run("demo")
    assert "0 runs started, 12 already there" in again.stdout
    tokens = tokens_from(again.stdout)
    assert {"ada", "fiona", "sasha", "olga", "lee"} <= set(tokens)

    server = deployment.serve()
    try:
        fiona = deployment.graphql(INBOX, tokens["fiona"]).json()["data"]["inbox"]["edges"]
        labels = [edge["node"]["label"] for edge in fiona]
        # Sam's and Sid's open claims; Frank's claimed one is not hers.
        assert "Review expense EXP-2026-0101: 84.50 GBP" in labels
        assert not any("EXP-2026-0103" in label for label in labels)
        frank = deployment.graphql(INBOX, tokens["frank"]).json()["data"]["inbox"]["edges"]
        held = [e["node"] for e in frank if e["node"]["holder"] == "frank"]
        assert [n["label"] for n in held] == ["Review expense EXP-2026-0103: 312.00 GBP"]
        sasha = deployment.graphql(INBOX, tokens["sasha"]).json()["data"]["inbox"]["edges"]
        assert {e["node"]["workflow"] for e in sasha} == {"support-ticket"}
        max_ = deployment.graphql(INBOX, tokens["max"]).json()["data"]["inbox"]["edges"]
        assert [e["node"]["label"] for e in max_] == ["Approve EXP-2026-0102 by sam: 1,890.00 GBP"]
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=30)
