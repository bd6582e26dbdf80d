"""The forecast watch's rules (core/reports/forecast_watch.py): which slots a pass reads,
when the flag goes up (the line) and down (quietly), and the line itself."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from taskflow import business, milestone
from taskflow.core.definition import DefinitionError
from taskflow.core.definition.checks import problems
from taskflow.core.reports import forecast_watch as fw
from taskflow.core.reports.forecast import BreachRisk, Peer
from taskflow.service.versions import definitions

NOW = datetime(2026, 12, 1, 9, tzinfo=UTC)


def _peer(opened_hours_ago: float, budget_hours: float = 10) -> Peer:
    opened = NOW - timedelta(hours=opened_hours_ago)
    return Peer(("w", "s", "review"), opened, opened + timedelta(hours=budget_hours), None, False)


def _risk(probability: float | None) -> BreachRisk:
    return BreachRisk(probability, "8 of 10 past slots breached", "all", 10, 8, 40, 0.5, "", "", 0)


def test_up_at_the_threshold_down_below_it_unchanged_without_history() -> None:
    assert fw.flag(_risk(0.7), None, 0.7) is True
    assert fw.flag(_risk(0.69), True, 0.7) is False
    assert fw.flag(_risk(None), True, 0.7) is True
    assert fw.flag(_risk(None), None, 0.7) is None


def test_the_line_is_written_only_as_the_flag_goes_up() -> None:
    assert fw.rises(None, True)
    assert fw.rises(False, True)
    assert not fw.rises(True, True)
    assert not fw.rises(True, False)
    assert not fw.rises(None, None)


def test_a_batch_is_bounded_least_recently_forecast_first_and_stops_at_the_at_risk_share() -> None:
    live = {
        "fresh": _peer(1),
        "older": _peer(2),
        "never": _peer(3),
        "late": _peer(8),  # 80 % of its budget: clock.at_risk speaks for it
        "overdue": _peer(12),
    }
    watched = {
        "fresh": fw.Watched(False, NOW - timedelta(minutes=1)),
        "older": fw.Watched(True, NOW - timedelta(minutes=30)),
    }
    assert fw.batch(live, watched, NOW, stop_share=0.75, size=10) == ["never", "older", "fresh"]
    assert fw.batch(live, watched, NOW, stop_share=0.75, size=2) == ["never", "older"]


def test_the_line_names_the_forecast_and_its_figures() -> None:
    peer = _peer(5)
    line = fw.line("slot-1", "review", peer, _risk(0.8), 0.7, NOW)
    assert (line.kind, line.slot_id, line.actor, line.at) == (fw.KIND, "slot-1", None, NOW)
    assert line.reason == "breach forecast 80 % reached 70 %: 8 of 10 past slots breached"
    assert line.details["due_at"] == "2026-12-01T14:00:00+00:00"
    assert (line.details["probability"], line.details["threshold"]) == (0.8, 0.7)


TICKET = """
from taskflow import Route, Slot, State, Workflow, business, milestone, who

class Ticket(Workflow):
    name = "ticket"
    version = 1
    tracks = "ticket"

    triage = State(initial=True, then=[Route("done")], slots=[Slot(
        "answer", candidates=who.role("agent"),
        milestones=[milestone.assigned(within=business.hours(1)),
                    milestone.finished(within=business.hours(8), forecast_alert={alert})])])
    done = State(terminal=True)
"""


def test_a_milestone_names_its_own_alert_threshold_else_the_setting_applies(
    tmp_path: Path,
) -> None:
    (tmp_path / "ticket.py").write_text(TICKET.format(alert=0.5))
    ticket = definitions.load([str(tmp_path)]).get("ticket")
    assert fw.threshold(ticket, "triage", "answer", "finished", 0.7) == 0.5
    assert fw.threshold(ticket, "triage", "answer", "assigned", 0.7) == 0.7  # names none
    # A slot or state the version no longer declares, a version the code does not load,
    # a slot without a report clock: the setting.
    assert fw.threshold(ticket, "triage", "gone", "finished", 0.7) == 0.7
    assert fw.threshold(ticket, "gone", "answer", "finished", 0.7) == 0.7
    assert fw.threshold(None, "triage", "answer", "finished", 0.7) == 0.7
    assert fw.threshold(ticket, "triage", "answer", None, 0.7) == 0.7
    # The definition's document (its digest) carries it only when set.
    [finished] = [m for m in ticket.slot("triage", "answer").milestones if m.kind == "finished"]
    assert finished.to_json()["forecast_alert"] == 0.5
    assert "forecast_alert" not in milestone.assigned(within=business.hours(1)).to_json()


@pytest.mark.parametrize("alert", ["0", "1", "1.5", "-0.2", "True", "'high'"])
def test_an_alert_outside_zero_to_one_is_refused_when_the_workflow_loads(
    tmp_path: Path, alert: str
) -> None:
    (tmp_path / "ticket.py").write_text(TICKET.format(alert=alert))
    with pytest.raises(DefinitionError) as refused:
        definitions.load([str(tmp_path)])
    assert refused.value.codes == ("BAD_FORECAST_ALERT",)
    message = str(refused.value)
    assert f"forecast_alert={alert} is not a probability strictly between 0 and 1" in message
    assert "milestone finished" in message
    assert "e.g. forecast_alert=0.5" in message
    with pytest.raises(problems.BadForecastAlert):
        milestone.finished(within=business.hours(8), forecast_alert=1.0)
