"""The access rule table covers every query, mutation and object field of the schema.

A field added to ``graphql/schema.graphql`` without a rule in
``taskflow.core.access.access_rules.FIELDS`` fails here, and so does a rule that no
test exercises (``TEST_ROWS`` names, per rule, the tests that prove it).
"""

from __future__ import annotations

import importlib
from pathlib import Path

from graphql import GraphQLObjectType, build_schema

from taskflow.core.access import access_rules

SCHEMA = Path(__file__).resolve().parents[2] / "graphql" / "schema.graphql"

#: Rule -> tests that prove it over HTTP (``module::function``).
TEST_ROWS: dict[str, list[str]] = {
    "operate": [
        "tests.api.test_needs_attention::test_needs_attention_is_scoped_and_refused_to_staff",
    ],
    "definitions": [
        "tests.api.test_query_api::test_workflows_serve_the_documents_taskflow_show_prints",
        "tests.api.test_sla_dry_run::test_a_caller_must_sign_in",
    ],
    "runs": ["tests.api.test_query_api::test_runs_filter_page_and_keep_to_the_callers_reach"],
    "calendars": [
        "tests.api.test_access::test_calendars_are_read_by_every_signed_in_caller_and_no_anonymous_one",
        "tests.api.test_calendars_api::test_every_signed_in_caller_reads_versions_and_no_one_else",
    ],
    "parent": [
        "tests.api.test_access::test_a_team_lead_reads_runs_through_their_teams_slots_and_slot_run_agrees"
    ],
    "self": ["tests.api.test_principals_api::test_node_answers_only_what_the_caller_may_see"],
    "admin": [
        "tests.api.test_principals_api::test_non_admins_cannot_list_principals",
        "tests.api.test_principals_api::test_non_admin_upsert_is_a_typed_refusal_and_changes_nothing",
    ],
    "candidate": ["tests.api.test_expense_flow::test_an_expense_goes_from_submitted_to_paid"],
    "candidates.add": [
        "tests.api.test_add_candidate::test_who_may_add_a_candidate_and_who_is_refused",
    ],
    "work": [
        "tests.api.test_access::test_a_lead_of_one_workflow_cannot_read_cancel_move_or_mint_on_another"
    ],
    "board": [
        "tests.api.test_access::test_a_lead_of_one_workflow_cannot_read_cancel_move_or_mint_on_another"
    ],
    "run.read": [
        "tests.api.test_access::test_a_lead_of_one_workflow_cannot_read_cancel_move_or_mint_on_another",
        "tests.api.test_access::test_a_team_lead_reads_runs_through_their_teams_slots_and_slot_run_agrees",
        "tests.api.test_access::test_a_work_page_with_nested_runs_checks_and_loads_each_run_once",
    ],
    "node": [
        "tests.api.test_access::test_a_lead_of_one_workflow_cannot_read_cancel_move_or_mint_on_another",
        "tests.api.test_principals_api::test_node_answers_only_what_the_caller_may_see",
        "tests.api.test_steps_api::test_a_step_is_a_node_seen_by_whoever_may_read_its_run",
    ],
    "links.read": [
        "tests.api.test_access::test_candidates_of_a_pending_slot_read_no_links_nor_their_recipients",
        "tests.api.test_integration_scope::test_an_integration_links_only_the_runs_it_started",
    ],
    "links.manage": [
        "tests.api.test_access::test_a_lead_of_one_workflow_cannot_read_cancel_move_or_mint_on_another",
        "tests.api.test_magic_links::test_a_candidate_mints_only_once_they_hold_the_slot",
        "tests.api.test_integration_scope::test_an_integration_links_only_the_runs_it_started",
    ],
    "link.token": ["tests.api.test_magic_links::test_complete_with_link_over_graphql"],
    "application": [
        "tests.api.test_access::test_the_mail_gateway_cannot_approve_an_expense_nor_read_it_or_its_outbox",
        "tests.api.test_integration_scope::test_an_integration_acts_only_on_the_runs_it_started",
    ],
    "subject.delete": [
        "tests.api.test_access::test_a_subject_is_deleted_by_the_application_that_started_its_runs_or_an_admin",
    ],
    "event.raise": [
        "tests.api.test_access::test_the_mail_gateway_cannot_approve_an_expense_nor_read_it_or_its_outbox",
        "tests.api.test_integration_scope::test_an_integration_acts_only_on_the_runs_it_started",
    ],
    "move": [
        "tests.api.test_access::test_a_lead_of_one_workflow_cannot_read_cancel_move_or_mint_on_another",
        "tests.api.test_expense_flow::test_the_submitter_may_withdraw_and_others_may_not",
    ],
    "undo": [
        "tests.api.test_access::test_a_lead_of_one_workflow_cannot_read_cancel_move_or_mint_on_another",
        "tests.api.test_undo::test_undo_needs_the_run_and_the_changes_own_rule",
        "tests.api.test_undo::test_undo_is_refused_with_its_reason_and_changes_nothing",
    ],
    "cancel": [
        "tests.api.test_access::test_a_lead_of_one_workflow_cannot_read_cancel_move_or_mint_on_another",
        "tests.api.test_integration_scope::test_an_integration_acts_only_on_the_runs_it_started",
    ],
    "report": ["tests.api.test_access::test_a_scoped_lead_reports_only_on_the_workflows_granted"],
    "outbox": [
        "tests.api.test_access::test_the_mail_gateway_cannot_approve_an_expense_nor_read_it_or_its_outbox"
    ],
    "webhooks": [
        "tests.api.test_webhooks_api::test_endpoints_are_managed_by_admins_and_leads_of_their_workflows",
        "tests.api.test_webhook_owner::test_an_endpoint_an_admin_created_is_never_a_leads",
        "tests.api.test_webhook_owner::test_a_leads_endpoint_stops_when_the_grant_goes_and_flows_again_when_it_returns",
    ],
    "workspaces": [
        "tests.api.test_workspaces_admin::test_only_the_default_workspaces_admins_may_use_the_workspace_verbs",
    ],
    "automations": [
        "tests.api.test_automations_api::test_leads_of_the_workflow_manage_its_automations_and_no_one_else",
    ],
    "timers": [
        "tests.integration.test_poison_timers::test_a_failing_firing_backs_off_then_is_parked_dead_and_seen_and_retried"
    ],
    "signout": [
        "tests.api.test_principal_lifecycle::test_sign_out_everywhere_refuses_earlier_tokens",
        "tests.api.test_principal_lifecycle::test_only_admins_sign_others_out",
    ],
    "outbox.link": [
        "tests.api.test_outsider_reminders::test_minting_again_revokes_the_link_minted_before_for_the_same_reminder"
    ],
    "outbox.send": [
        "tests.api.test_notification_delivery::test_only_integrations_take_and_mark_and_only_their_workflows"
    ],
}


def schema_fields() -> dict[str, frozenset[str]]:
    """Every object field of the schema (``Type.field``) with its type's interfaces."""
    schema = build_schema(SCHEMA.read_text(encoding="utf-8"))
    return {
        f"{name}.{field}": frozenset(i.name for i in t.interfaces)
        for name, t in schema.type_map.items()
        if isinstance(t, GraphQLObjectType) and not name.startswith("__")
        for field in t.fields
    }


def test_every_query_mutation_and_object_field_has_an_access_rule() -> None:
    fields = schema_fields()
    missing = sorted(
        key
        for key, interfaces in fields.items()
        if access_rules.rule_of(*key.split("."), interfaces) is None
    )
    assert not missing, (
        f"no access rule for {missing}: add each to taskflow/core/access/access_fields.py FIELDS "
        "(and docs/access.md when it needs a new rule)"
    )
    stale = sorted(set(access_rules.FIELDS) - set(fields))
    assert not stale, f"access rules for fields the schema no longer has: {stale}"
    assert any(f.startswith("Query.") for f in fields)
    assert any(f.startswith("Mutation.") for f in fields)
    # Only values of checked objects are derived: no query, mutation or node type is.
    derived = [k for k in fields if k not in access_rules.FIELDS]
    assert derived
    assert all(access_rules.rule_of(*k.split("."), fields[k]) == "parent" for k in derived)
    assert not any(k.startswith(("Query.", "Mutation.", "Run.", "Slot.")) for k in derived)


def test_every_rule_is_named_and_has_a_test_row_that_exists() -> None:
    unknown = sorted(set(access_rules.FIELDS.values()) - set(access_rules.RULES))
    assert not unknown, f"FIELDS names rules RULES does not define: {unknown}"
    untested = sorted(set(access_rules.RULES) - set(TEST_ROWS))
    assert not untested, f"rules without a test row: {untested}"
    for rule, rows in TEST_ROWS.items():
        assert rows, rule
        for row in rows:
            module, function = row.split("::")
            assert callable(getattr(importlib.import_module(module), function, None)), row


def test_the_documented_table_names_every_rule() -> None:
    doc = (Path(__file__).resolve().parents[2] / "docs" / "access.md").read_text()
    for rule in access_rules.RULES:
        assert f"`{rule}`" in doc, f"docs/access.md does not describe the rule {rule!r}"
