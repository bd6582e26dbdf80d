"""The workspace wall in the schema (docs/workspaces.md): the ``workspace`` column on every
table a workspace holds, filled from the transaction's ``taskflow.workspace`` setting or
from the row's run, and the row-level security policy that shows a transaction only the
rows of its workspace ('*': every workspace, the workers'; unset: none, fail closed).

The column is added with a constant default first and given its real one after, so a
migration on a large table changes only the catalog (no rewrite).
"""

from __future__ import annotations

from taskflow.core.workspaces.ids import DEFAULT as DEFAULT

#: The setting a transaction names its workspace with (``db.Database.transaction``).
SETTING = "taskflow.workspace"

#: Every workspace (the workers, the CLI's admin verbs).
EVERY = "*"

#: Tables whose rows hang off another held row (a run, mostly): a new row takes that row's
#: workspace (trigger; FUNCTION says which row each table's rows hang off).
FROM_PARENT: tuple[str, ...] = (
    "run",  # from its subject
    "run_child",  # from its parent run
    "automation_act",  # from its automation
    "step_attempt",  # from its step
    "webhook_delivery",  # from its endpoint
    "slot",
    "audit_event",
    "sla_clock",
    "timer",
    "notification",
    "magic_link",
    "event_buffer",
    "pruned_slot",
    "outbox_event",
    "step",
    "step_once",
    "state_span",
    # Held since migration 2026-12-04T19:30 (they came after the workspace migration):
    "automation_line",  # from its timeline line
    "automation_pending",  # from its run
    "slot_forecast",  # from its slot
)
#: Tables whose rows take the transaction's workspace (a request's, or the default).
FROM_SETTING: tuple[str, ...] = (
    "principal",
    "subject",
    "report_session",
    "webhook_endpoint",
    "automation",
    "file_upload",
    "team_calendar",  # since migration 2026-12-04T20:20
)
#: Every table a workspace holds.
HELD: tuple[str, ...] = FROM_SETTING + FROM_PARENT

#: The transaction's workspace for a new row: the setting when it names one, else default.
CURRENT = (
    "CREATE FUNCTION taskflow_workspace() RETURNS uuid LANGUAGE sql STABLE AS $$"
    f" SELECT CASE WHEN coalesce(current_setting('{SETTING}', true), '') IN ('', '{EVERY}')"
    f" THEN '{DEFAULT}'::uuid ELSE current_setting('{SETTING}', true)::uuid END $$"
)
#: A new row hanging off another takes its workspace (a run its subject's, most rows their
#: run's): a worker acting across workspaces writes each row in its own.
FUNCTION = (
    "CREATE FUNCTION workspace_from_parent() RETURNS trigger LANGUAGE plpgsql AS $$\n"
    "DECLARE\n  w uuid;\nBEGIN\n"
    "  IF TG_TABLE_NAME = 'run' THEN\n"
    "    SELECT workspace INTO w FROM subject WHERE id = NEW.subject;\n"
    "  ELSIF TG_TABLE_NAME = 'run_child' THEN\n"
    "    SELECT workspace INTO w FROM run WHERE id = NEW.parent;\n"
    "  ELSIF TG_TABLE_NAME = 'automation_act' THEN\n"
    "    SELECT workspace INTO w FROM automation WHERE id = NEW.automation;\n"
    "  ELSIF TG_TABLE_NAME = 'step_attempt' THEN\n"
    "    SELECT workspace INTO w FROM step WHERE id = NEW.step;\n"
    "  ELSIF TG_TABLE_NAME = 'webhook_delivery' THEN\n"
    "    SELECT workspace INTO w FROM webhook_endpoint WHERE id = NEW.endpoint;\n"
    "  ELSIF TG_TABLE_NAME = 'automation_line' THEN\n"
    "    SELECT workspace INTO w FROM audit_event WHERE id = NEW.line;\n"
    "  ELSIF TG_TABLE_NAME = 'slot_forecast' THEN\n"
    "    SELECT workspace INTO w FROM slot WHERE id = NEW.slot;\n"
    "  ELSIF NEW.run IS NOT NULL THEN\n"
    "    SELECT workspace INTO w FROM run WHERE id = NEW.run;\n"
    "  END IF;\n"
    "  NEW.workspace := coalesce(w, NEW.workspace);\n"
    "  RETURN NEW;\nEND\n$$"
)
#: Who sees a row: a transaction of its workspace, or one of every workspace.
#: Each side is a scalar subquery, so PostgreSQL works it out once per statement (an
#: InitPlan) rather than per row, and ``workspace = <uuid>`` can serve as an index condition;
#: a setting that is no UUID (unset, '') names no workspace.
POLICY = (
    f"(SELECT current_setting('{SETTING}', true) = '{EVERY}')"
    f" OR workspace = (SELECT CASE WHEN current_setting('{SETTING}', true)"
    " ~ '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$'"
    f" THEN current_setting('{SETTING}', true)::uuid END)"
)

WORKSPACE_ROW = (
    "INSERT INTO workspace (id, name, status) "
    f"VALUES ('{DEFAULT}', 'default', 'active') ON CONFLICT (id) DO NOTHING"
)


def columns() -> list[str]:
    """The column of every held table (constant default, then the setting's)."""
    out: list[str] = []
    for table in HELD:
        out.append(
            f"ALTER TABLE {table} ADD COLUMN workspace uuid NOT NULL DEFAULT '{DEFAULT}'"
            " REFERENCES workspace (id)"
        )
        out.append(f"ALTER TABLE {table} ALTER COLUMN workspace SET DEFAULT taskflow_workspace()")
    return out


def triggers() -> list[tuple[str, str]]:
    """(name, CREATE TRIGGER) for the tables whose rows take their run's workspace."""
    return [
        (
            f"{table}_workspace",
            f"CREATE TRIGGER {table}_workspace BEFORE INSERT ON {table}"
            " FOR EACH ROW EXECUTE FUNCTION workspace_from_parent()",
        )
        for table in FROM_PARENT
    ]


#: Under row-level security only leakproof operators serve as index conditions (the policy
#: runs first); array overlap (``audience && keys``: the inbox's and claim-next's GIN index)
#: is not declared so, though it reveals nothing of a row (text equality underneath). Marking
#: it takes a superuser: a migration run by another role warns and goes on (the inbox then
#: scans every open slot: docs/workspaces.md).
LEAKPROOF = (
    "DO $$ BEGIN ALTER FUNCTION arrayoverlap(anyarray, anyarray) LEAKPROOF; "
    "EXCEPTION WHEN insufficient_privilege THEN RAISE WARNING 'arrayoverlap is not LEAKPROOF: "
    "a superuser should run ALTER FUNCTION arrayoverlap(anyarray, anyarray) LEAKPROOF "
    "(docs/workspaces.md)'; END $$"
)


def policies() -> list[str]:
    """Row-level security on every held table, its owner included (FORCE)."""
    out: list[str] = [LEAKPROOF]
    for table in HELD:
        out.append(f"ALTER TABLE {table} ENABLE ROW LEVEL SECURITY")
        out.append(f"ALTER TABLE {table} FORCE ROW LEVEL SECURITY")
        out.append(f"CREATE POLICY workspace_wall ON {table} USING ({POLICY})")
    return out


#: Name run $1's workspace for the rest of the transaction (a worker acting for one run: what
#: it creates without a parent row, a child's subject, is that workspace's).
ENTER_RUN = (
    f"SELECT set_config('{SETTING}', coalesce((SELECT workspace::text FROM run WHERE id = $1),"
    f" current_setting('{SETTING}', true), ''), true)"
)

#: Claim-next walks its workspace's open slots by due instant (its statement names the
#: workspace: with only ``slot_open_by_due`` the planner read every candidate and sorted).
INDEXES: tuple[tuple[str, str], ...] = (
    (
        "slot_open_by_workspace_due",
        "CREATE INDEX slot_open_by_workspace_due ON slot (workspace, due_at, priority, id) "
        "WHERE status = 'open'",
    ),
)
