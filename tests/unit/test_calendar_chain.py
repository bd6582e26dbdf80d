"""The calendar chain's one rule (``core/clocks/chain.py``): which link answers, in which
order, and that nothing else picks a milestone clock's calendar."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from taskflow import business, real
from taskflow.core.clocks import chain
from taskflow.core.definition.checks import problems
from taskflow.core.definition.milestones import milestone

PACKAGE = Path(__file__).resolve().parents[2] / "taskflow"
FULL = ("holder", "region", "milestone", "workflow")
REGIONS = {"de": "de-berlin", "de-by": "de-munich", "US": "us-new-york"}
PEOPLE = chain.People({"fiona": "uk-london", "sid": None})


def answer(
    subject: dict[str, str], holder: str | None, links: tuple[str, ...] = FULL, **options: str
) -> chain.Answer:
    ms = milestone.finished(
        within=business.hours(4), chain=links, regions=REGIONS, calendar=options.get("calendar")
    )
    return chain.resolve("in-bengaluru", ms, subject, holder, PEOPLE)[1]


@pytest.mark.parametrize(
    ("subject", "holder", "calendar", "link"),
    [
        ({"country": "DE"}, "fiona", "uk-london", "holder"),  # the holder's own first
        ({"country": "DE"}, "sid", "de-berlin", "region"),  # no calendar of his own
        ({"country": "DE"}, None, "de-berlin", "region"),  # nobody holds it
        ({"country": "de", "region": "BY"}, None, "de-munich", "region"),  # subdivision first
        ({"country": "DE", "region": "HH"}, None, "de-berlin", "region"),  # else the country
        ({"country": "FR"}, None, "in-bengaluru", "workflow"),  # no such region
        ({}, None, "in-bengaluru", "workflow"),
    ],
)
def test_the_first_link_that_names_a_calendar_answers(
    subject: dict[str, str], holder: str | None, calendar: str, link: str
) -> None:
    assert answer(subject, holder) == chain.Answer(calendar, link)


def test_the_order_is_the_chains_and_without_one_the_old_rule_holds() -> None:
    assert answer({"country": "DE"}, "fiona", ("region", "holder")).link == "region"
    assert answer({}, "fiona", (), calendar="us-new-york") == chain.Answer(
        "us-new-york", "milestone"
    )
    assert answer({}, "fiona", ()) == chain.Answer("in-bengaluru", "workflow")
    assert answer({}, None, ("milestone", "workflow"), calendar="x") == chain.Answer(
        "x", "milestone"
    )


def test_a_budget_naming_its_own_calendar_and_real_time_win_over_every_link() -> None:
    own = milestone.finished(within=business.hours(4, calendar="24x7"), chain=FULL)
    assert chain.resolve("uk-london", own, {}, "fiona", PEOPLE)[1] == chain.Answer("24x7", "budget")
    wall = milestone.finished(within=real.hours(4), chain=FULL)
    budget, said = chain.resolve("uk-london", wall, {}, "fiona", PEOPLE)
    assert budget is not None
    assert budget.calendar is None
    assert said == chain.Answer(None, "budget")


def test_a_holder_this_decision_does_not_know_keeps_the_clocks_calendar() -> None:
    ms = milestone.finished(within=business.hours(4), chain=("holder", "workflow"))
    assert not chain.holder_known(ms, "leah", PEOPLE)
    assert chain.holder_known(ms, None, PEOPLE)
    kept = chain.knowing(ms, "de-berlin", "leah", PEOPLE)
    assert chain.resolve("uk-london", ms, {}, "leah", kept)[1] == chain.Answer(
        "de-berlin", "recorded"
    )


@pytest.mark.parametrize("links", [("boss",), ("holder", "holder")])
def test_a_bad_chain_is_refused_when_the_workflow_loads(links: tuple[str, ...]) -> None:
    with pytest.raises(problems.BadCalendarChain) as refused:
        milestone.finished(within=business.hours(1), chain=links)
    assert refused.value.codes == ("BAD_CALENDAR_CHAIN",)
    assert "holder, team, region, milestone, workflow" in str(refused.value)


def _calls(name: str) -> list[tuple[str, ast.Call]]:
    found = []
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call):
                func = node.func
                called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
                if called == name:
                    found.append((str(path.relative_to(PACKAGE)), node))
    return found


def test_only_the_chain_resolves_a_milestones_budget() -> None:
    # A milestone's budget resolved anywhere else would pick its calendar by another rule.
    places = {
        where
        for where, call in _calls("resolve_budget")
        if call.args and "within" in ast.unparse(call.args[0])
    }
    assert places == {"core/clocks/chain.py"}


def test_every_shell_that_moves_a_slot_hands_the_chain_its_holder() -> None:
    # The shells' sync_clocks calls (a holder changed outside the engine) pass what the
    # chain knows of the holder; the engine's own (pure) keep a clock's calendar.
    shells = [(w, c) for w, c in _calls("sync_clocks") if w.startswith("service/")]
    assert shells, "the walk found no shell"
    assert all(len(c.args) + len(c.keywords) == 5 for _, c in shells), [w for w, _ in shells]


def test_the_team_link_asks_the_slots_teams_the_holders_own_first() -> None:
    audience = ("user:fiona", "role:finance", "group:emea", "attr:region=eu")
    assert chain.teams_of(audience) == ("group:emea", "role:finance")  # by name
    assert chain.teams_of(audience, {"role:finance"}) == ("role:finance", "group:emea")
    table = {"group:emea": "de-berlin", "role:finance": "uk-london", "role:gone": "atlantis"}
    known = {"de-berlin", "uk-london"}
    assert chain.team_calendar(chain.teams_of(audience), table, known) == "de-berlin"
    assert chain.team_calendar(("role:gone", "role:finance"), table, known) == "uk-london"
    assert chain.team_calendar(("role:none",), table, known) is None


def test_the_team_link_answers_in_its_place_and_unknown_teams_keep_the_clock() -> None:
    ms = milestone.finished(within=business.hours(4), chain=("holder", "team", "workflow"))
    teams = chain.People({"sid": None}, team="de-berlin", teams_known=True)
    assert chain.resolve("in-bengaluru", ms, {}, "sid", teams)[1] == chain.Answer(
        "de-berlin", "team"
    )
    held = chain.People({"fiona": "uk-london"}, team="de-berlin", teams_known=True)
    assert chain.resolve("in-bengaluru", ms, {}, "fiona", held)[1].link == "holder"
    assert not chain.holder_known(ms, None, chain.NOBODY)  # a pure step read no teams
    kept = chain.knowing(ms, "us-new-york", None, chain.NOBODY)
    assert chain.resolve("in-bengaluru", ms, {}, None, kept)[1].calendar == "us-new-york"


def test_a_region_named_by_a_subject_field_or_the_holders_attribute() -> None:
    def region(subject: dict[str, object], holder: str | None, people: chain.People, src: str):
        ms = milestone.finished(
            within=business.hours(4),
            chain=("region", "workflow"),
            regions={"DE-BY": "de-munich", "DE": "de-berlin"},
            region_from=src,
        )
        return chain.resolve("in-bengaluru", ms, subject, holder, people)[1]

    office = {"office": {"region": "de-by"}}
    assert region(office, None, chain.NOBODY, "subject.office.region").calendar == "de-munich"
    hamburg = {"office": {"region": "DE-HH"}}
    assert region(hamburg, None, chain.NOBODY, "subject.office.region").calendar == "de-berlin"
    assert region({}, None, chain.NOBODY, "subject.office.region").link == "workflow"
    people = chain.People({"sid": None}, attributes={"sid": {"site": "DE-BY"}})
    assert region({}, "sid", people, "holder.site") == chain.Answer("de-munich", "region")
    assert region({}, None, people, "holder.site").link == "workflow"  # nobody holds it
    ms = milestone.finished(
        within=business.hours(4),
        chain=("region",),
        regions={"DE": "de-berlin"},
        region_from="holder.site",
    )
    assert chain.asks_holder([ms])
    assert not chain.holder_known(ms, "sid", chain.NOBODY)  # a pure step keeps the clock's
    kept = chain.knowing(ms, "uk-london", "sid", chain.NOBODY)
    assert chain.resolve("in-bengaluru", ms, {}, "sid", kept)[1].calendar == "uk-london"
