"""``taskflow sla dry-run FILE`` as a real process: each example's timeline (examples/
dry_runs/, shown in docs/sla.md) played offline, and its refusals (exit 1, one line)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from taskflow.config import config
from tests.acceptance.conftest import TASKFLOW

pytestmark = pytest.mark.slow

EXAMPLES = config.PROJECT_ROOT / "examples" / "dry_runs"


def dry_run(path: Path | str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*TASKFLOW, "sla", "dry-run", str(path)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=config.PROJECT_ROOT,
    )


def answer(name: str) -> dict[str, Any]:
    done = dry_run(EXAMPLES / f"{name}.json")
    assert done.returncode == 0, done.stderr
    found: dict[str, Any] = json.loads(done.stdout)
    return found


def clocks(found: dict[str, Any]) -> list[tuple[str, str, str, str | None, str | None]]:
    return [
        (m["slot"], m["milestone"], m["status"], m["due_at"], m["breached_at"])
        for m in found["milestones"]
    ]


def test_the_expense_example() -> None:
    found = answer("expense_approval")
    assert (found["state"], found["status"]) == ("manager_approval", "active")
    # Submitted Friday 15:00: picked up Monday 10:00 (due 10:30), decided Tuesday 16:00, an
    # hour after its 2 business days ran out; the manager's 3 days run out Friday 16:00.
    assert clocks(found) == [
        ("finance_review", "assigned", "met", "2026-12-07T10:30:00+00:00", None),
        ("finance_review", "finished", "met", "2026-12-08T15:00:00+00:00",
         "2026-12-08T15:00:00+00:00"),
        ("manager_approval", "finished", "breached", "2026-12-11T16:00:00+00:00",
         "2026-12-11T16:00:00+00:00"),
    ]  # fmt: skip
    assert [(e["at"], e["kind"]) for e in found["escalations"]] == [
        ("2026-12-08T15:00:00+00:00", "slot.priority_raised"),
        ("2026-12-11T16:00:00+00:00", "slot.escalated"),
    ]


def test_the_support_example_with_a_raised_priority() -> None:
    found = answer("support_ticket")
    # Raised to P1 (8 hours round the clock) on Wednesday 10:30: the first response's 4
    # business hours are spent already (due at the change), the resolution keeps its
    # 3h10m spent: due 14:50 the same day.
    assert clocks(found)[2:] == [
        ("first_response", "finished", "breached", "2026-12-02T10:30:00+00:00",
         "2026-12-02T10:30:00+00:00"),
        ("resolution", "finished", "breached", "2026-12-02T14:50:00+00:00",
         "2026-12-02T14:50:00+00:00"),
    ]  # fmt: skip
    recomputed = [x for x in found["timeline"] if x["kind"] == "clock.recomputed"]
    assert [(x["slot"], x["details"]["policy"]) for x in recomputed] == [
        ("first_response", "keep-elapsed"),
        ("resolution", "keep-elapsed"),
    ]


def test_the_vendor_example_crosses_christmas_and_expires() -> None:
    found = answer("vendor_onboarding")
    assert (found["state"], found["status"]) == ("expired", "completed")
    upload = found["milestones"][1]
    assert upload["due_at"] == "2027-01-06T09:00:00+01:00"
    assert "  Fri 2026-12-25  holiday: Christmas Day" in upload["explain"]
    assert "  Fri 2027-01-01  holiday: New Year's Day" in upload["explain"]
    # The bank details never came: two days before the request's 21 days run out the vendor
    # is warned, and on the day the request expires and the onboarding with it.
    kinds = [(x["at"], x["kind"]) for x in found["timeline"]]
    assert ("2027-01-09T08:00:00+00:00", "expiry.warned") in kinds
    assert ("2027-01-11T08:00:00+00:00", "slot.expired") in kinds
    assert "timeout.fired" not in [k for _, k in kinds]


def test_refusals_exit_1_with_one_line(tmp_path: Path) -> None:
    doc = json.loads((EXAMPLES / "support_ticket.json").read_text())
    doc["events"] = doc["events"][:1] + [{"at": "2026-12-01T10:00:00Z", "kind": "end"}] * 200
    (tmp_path / "long.json").write_text(json.dumps(doc))
    done = dry_run(tmp_path / "long.json")
    assert done.returncode == 1
    assert done.stderr.startswith("taskflow: error [DRY_RUN_TOO_LONG]: A dry run plays at most 200")
    (tmp_path / "broken.json").write_text("{")
    broken = dry_run(tmp_path / "broken.json")
    assert broken.returncode == 1
    assert "is not JSON (line 1" in broken.stderr
    assert "Traceback" not in broken.stderr
