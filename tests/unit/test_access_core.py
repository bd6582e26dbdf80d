"""Scoped powers: how grants are read, and where each reaches (``core.access``)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from taskflow import errors
from taskflow.core.access import access
from taskflow.core.access import principals as core
from taskflow.core.runs.model import SlotView
from tests.unit.slot_views import slot_view


def person(**data: object) -> core.Principal:
    return core.build({"id": "p", "display_name": "P", **data})


def slot(keys: tuple[str, ...], status: str = "open") -> SlotView:
    return slot_view(frozenset(keys), status=status)


def test_a_bare_lead_or_integration_role_reaches_nothing() -> None:
    bare = person(roles=["lead", "manager", "integration"])
    assert access.oversight(bare) == ()
    assert access.application(bare) == ()
    assert not access.may_read_run(bare, "expense-approval", [slot(("role:finance",))])
    assert not access.may_raise_as_application(bare, "expense-approval", "reviewed", bare.id)
    assert not access.may_start(bare, "expense-approval")


def test_admin_is_global() -> None:
    admin = person(roles=["admin"])
    assert access.reader(admin) is None
    assert access.may_raise_as_application(admin, "any", "thing", "someone-else")
    assert access.may_manage_principals(admin)


def test_grants_reach_their_workflows_teams_and_events() -> None:
    p = person(
        powers=[
            {"power": "lead", "workflows": ["a"]},
            {"power": "lead", "workflows": ["b"], "teams": ["group:emea"]},
            {"power": "integration", "workflows": ["c"], "events": ["replied"]},
        ]
    )
    assert access.may_read_run(p, "a", [])
    assert not access.may_read_run(p, "b", [slot(("group:apac",))])
    assert access.may_read_run(p, "b", [slot(("group:apac",)), slot(("group:emea",))])
    assert access.may_read_run(p, "c", [])  # an application reads its workflows' runs
    assert not access.may_read_run(p, "d", [])
    assert access.may_raise_as_application(p, "c", "replied", p.id)
    assert not access.may_raise_as_application(p, "c", "triaged", p.id)
    assert not access.may_raise_as_application(p, "a", "replied", p.id)
    # Integrations act on the runs they started only (docs/access.md).
    assert not access.may_raise_as_application(p, "c", "replied", "another-app")
    assert not access.may_raise_as_application(p, "c", "replied", None)
    assert access.acts_on_run(p, "c", p.id)
    assert not access.acts_on_run(p, "c", "another-app")
    assert not access.may_cancel(p, "c", [], "another-app")
    assert access.may_cancel(p, "c", [], p.id)
    assert access.may_cancel(p, "a", [], "another-app")  # as the lead of a
    assert access.workflows_of(access.application(p)) == frozenset({"c"})
    assert access.report_scope(p) == (
        access.Reach(frozenset({"a"})),
        access.Reach(frozenset({"b"}), frozenset({"group:emea"})),
    )


def test_candidates_of_a_pending_slot_read_no_links() -> None:
    fiona = person(roles=["finance"])
    assert not access.may_read_links(fiona, "a", slot(("role:finance",), "pending"), None)
    assert access.may_read_links(fiona, "a", slot(("role:finance",), "open"), None)
    assert not access.may_manage_links(fiona, "a", slot(("role:finance",), "open"), None)


def test_an_integration_manages_the_links_of_the_runs_it_started_only() -> None:
    app = person(powers=[{"power": "integration", "workflows": ["c"]}])
    lead = person(powers=[{"power": "lead", "workflows": ["c"], "teams": ["group:emea"]}])
    open_slot = slot(("group:emea",))
    assert access.may_manage_links(app, "c", open_slot, app.id)
    assert access.may_read_links(app, "c", open_slot, app.id)
    for started_by in ("another-app", None):
        assert not access.may_manage_links(app, "c", open_slot, started_by)
        assert not access.may_read_links(app, "c", open_slot, started_by)
    assert not access.may_manage_links(app, "d", open_slot, app.id)  # not its workflow
    # Leads (where their teams reach) and admins manage links whoever started the run.
    assert access.may_manage_links(lead, "c", open_slot, "another-app")
    assert not access.may_manage_links(lead, "c", slot(("group:apac",)), "another-app")
    assert access.may_manage_links(person(roles=["admin"]), "c", open_slot, None)


@pytest.mark.parametrize(
    "powers",
    [
        [{"power": "admin"}],
        [{"power": "lead", "events": ["x"]}],
        [{"power": "integration", "teams": ["role:x"]}],
        [{"power": "lead", "teams": ["finance"]}],
        [{"power": "lead", "workflows": []}],
        [{"power": "lead", "where": ["a"]}],
        "not json",
        {"power": "lead"},
    ],
)
def test_bad_grants_are_refused_naming_the_fix(powers: object) -> None:
    with pytest.raises(errors.ValidationError) as refused:
        person(powers=powers)
    assert refused.value.facts["field"] == "powers"


def test_grants_round_trip_through_json_text() -> None:
    p = person(powers='[{"power": "manager", "workflows": ["a"], "teams": ["role:x"]}]')
    assert [g.as_dict() for g in p.powers] == [
        {"power": "manager", "workflows": ["a"], "teams": ["role:x"]}
    ]


def test_a_csv_file_carries_grants_in_a_powers_column(tmp_path: Path) -> None:
    from taskflow.service.access import principals as service

    path = tmp_path / "people.csv"
    path.write_text(
        "id,display_name,roles,powers\n"
        'leah,Leah,lead,"[{""power"": ""lead"", ""workflows"": [""expense-approval""]}]"\n'
        "fiona,Fiona,finance,\n",
        encoding="utf-8",
    )
    leah, fiona = (core.build(r) for r in service.parse_file(path))
    assert [g.describe() for g in leah.powers] == ["lead of expense-approval"]
    assert fiona.powers == ()


def test_operators_are_leads_and_managers_of_the_workflow_and_admins() -> None:
    lead = person(
        powers=[
            {"power": "lead", "workflows": ["a"]},
            {"power": "manager", "workflows": ["b"], "teams": ["group:emea"]},
            {"power": "integration", "workflows": ["c"]},
        ]
    )
    assert access.may_operate(lead, "a")
    assert access.may_operate(lead, "b")  # a team grant reaches the whole workflow's operations
    assert not access.may_operate(lead, "c")  # applications do not operate
    assert access.workflows_of(access.attention_scope(lead)) == frozenset({"a", "b"})
    assert access.may_operate(person(roles=["admin"]), "anything")
    assert not access.may_operate(person(roles=["lead", "finance"]), "a")
    assert access.attention_scope(person(roles=["lead"])) == ()


def test_only_the_default_workspaces_admins_run_the_installation() -> None:
    default, tenant = "00000000-0000-4000-8000-000000000001", "7d3c1f0e-0000-4000-8000-00000000000a"
    admin = person(roles=["admin"])
    assert access.is_deployment_admin(dataclasses.replace(admin, workspace=default))
    assert access.is_deployment_admin(admin)  # not stored yet: it is created in the default
    assert not access.is_deployment_admin(dataclasses.replace(admin, workspace=tenant))
    lead = person(powers=[{"power": "lead", "workflows": ["a"]}])
    assert not access.is_deployment_admin(dataclasses.replace(lead, workspace=default))
