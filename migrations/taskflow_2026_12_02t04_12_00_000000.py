"""claim-next's writes as a function: ``claim_plain`` claims the slot its caller chose and
locked, meets its assigned clock, cancels that clock's timers and writes the timeline lines
(``store/slots/claims.py``, ``slots/claims.sql``). PL/pgSQL keeps the plans of its statements per
session, so claim-next no longer plans a statement of data-modifying CTEs on every call.
"""

from piccolo.apps.migrations.auto.migration_manager import MigrationManager
from piccolo.table import Table

ID = "2026-12-02T04:12:00:000000"
VERSION = "1.38.0"
DESCRIPTION = "claim_plain: claim-next's writes as a function"

FUNCTION = "-- The function claim_plain (migration 2026-12-02T04:12, schema_extras.EXTRA_FUNCTIONS):\n-- claim_next_plain's writes on the slot $2 its caller chose and locked (FOR UPDATE):\n-- claimer $1 (text), the claim's instant $3, the declarations with milestones $4 and the\n-- reminders on the assigned milestone $5 (text[], as claim_next_plain's). It returns the\n-- claimed slot with its run, subject and once values (COALESCE((SELECT jsonb_object_agg(o.name, o.result) FROM step_once o WHERE o.run = r.id), '{}'::jsonb): runs.ONCE_COLUMN), or no\n-- row (nothing written) when the slot is not plain: its assigned clock paused, or its\n-- declaration has milestones whose clocks never started. PL/pgSQL keeps\n-- the plans of its statements for the session; a statement of data-modifying CTEs is\n-- planned anew on every call, which cost more than running it (bench/README.md).\n-- Lock order (docs/architecture.md): the slot (the caller's), its clock, its timers.\nCREATE FUNCTION claim_plain(text, uuid, timestamptz, text[], text[])\nRETURNS TABLE (claimed_slot slot, claimed_run run, claimed_subject subject, claimed_once jsonb)\nLANGUAGE plpgsql ROWS 1 AS $$\nDECLARE\n  v_decl text;\n  v_clock uuid;\n  v_met timestamptz;\n  v_due timestamptz;\n  v_running boolean;\n  v_claimed slot;\nBEGIN\n  SELECT concat_ws(' ', sl.workflow, r.definition_version, sl.state, sl.name), k.id, k.met_at,\n         k.due_at, (k.id IS NULL OR k.met_at IS NOT NULL OR (k.pauses->-1 IS NULL OR k.pauses->-1->>1 IS NOT NULL))\n    INTO v_decl, v_clock, v_met, v_due, v_running\n    FROM slot sl JOIN run r ON r.id = sl.run\n    LEFT JOIN sla_clock k ON k.slot = sl.id AND k.milestone = 'assigned'\n   WHERE sl.id = $2;\n  IF NOT v_running OR (v_clock IS NULL AND v_decl = ANY($4)\n                        AND NOT EXISTS (SELECT 1 FROM sla_clock a WHERE a.slot = $2)) THEN\n    RETURN;\n  END IF;\n  WITH next AS (SELECT $3 AS at)\n  UPDATE slot s SET status = 'claimed', holder = $1, claimed_at = (SELECT at FROM next),\n    version = s.version + 1, updated_at = (SELECT at FROM next),\n    -- The first pickup, and the open hold the claim closes (an\n    -- escalation may have reopened a held slot) added to the held time.\n    picked_at = coalesce(s.picked_at, (SELECT at FROM next)),\n    held_us = s.held_us + coalesce(greatest(0, (extract(epoch FROM ((SELECT at FROM next)) - (s.held_since)) * 1000000)::bigint), 0),\n    held_since = (SELECT at FROM next),\n         -- The slot's copy of its report clock (store/report_kept.py) when that is the\n         -- assigned one (no finished clock).\n         sla_met_at = CASE WHEN s.sla_milestone = 'assigned' AND v_met IS NULL\n                           THEN $3 ELSE s.sla_met_at END,\n         due_at = (SELECT min(k.due_at) FROM sla_clock k\n                   WHERE k.slot = s.id AND k.milestone <> 'assigned'\n                     AND k.met_at IS NULL AND (k.pauses->-1 IS NULL OR k.pauses->-1->>1 IS NOT NULL))\n   WHERE s.id = $2\n  RETURNING s.* INTO v_claimed;\n  IF v_clock IS NOT NULL AND v_met IS NULL THEN\n    UPDATE sla_clock k SET met_at = $3, updated_at = $3 WHERE k.id = v_clock;\n  END IF;\n  UPDATE timer t SET status = 'cancelled', updated_at = $3\n   WHERE t.slot = $2 AND t.status = 'armed'\n     AND ((t.kind IN ('breach', 'at_risk') AND t.part = 'assigned')\n          OR (t.kind = 'reminder' AND v_decl || ' ' || t.part = ANY($5)));\n  -- One statement for both lines (the outbox trigger runs once per statement).\n  INSERT INTO audit_event (run, slot, kind, actor, reason, details, at)\n  SELECT v_claimed.run, $2, l.kind, $1, l.reason, l.details, $3\n  FROM (VALUES\n      (1, 'slot.claimed', 'claim next', jsonb_build_object('slot', v_claimed.name)),\n      (2, 'clock.met', NULL,\n       CASE WHEN v_clock IS NOT NULL AND v_met IS NULL\n       THEN jsonb_build_object('slot', v_claimed.name, 'milestone', 'assigned',\n                               'due_at', to_char(v_due AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS') || CASE WHEN extract(microseconds FROM v_due)::bigint % 1000000 = 0 THEN '' ELSE to_char(v_due AT TIME ZONE 'UTC', '.US') END || '+00:00',\n                               'breached', CASE WHEN v_due < $3 THEN to_char(v_due AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS') || CASE WHEN extract(microseconds FROM v_due)::bigint % 1000000 = 0 THEN '' ELSE to_char(v_due AT TIME ZONE 'UTC', '.US') END || '+00:00' END)\n       END)\n  ) AS l(n, kind, reason, details)\n  WHERE l.details IS NOT NULL\n  ORDER BY l.n;\n  RETURN QUERY\n  SELECT v_claimed, r, j, COALESCE((SELECT jsonb_object_agg(o.name, o.result) FROM step_once o WHERE o.run = r.id), '{}'::jsonb)\n  FROM run r JOIN subject j ON j.id = r.subject WHERE r.id = v_claimed.run;\nEND\n$$"


class _Raw(Table):
    pass


async def forwards():
    manager = MigrationManager(migration_id=ID, app_name="taskflow", description=DESCRIPTION)

    async def create() -> None:
        # raw() formats its text: the function's braces doubled.
        await _Raw.raw(FUNCTION.replace("{", "{{").replace("}", "}}"))

    async def drop() -> None:
        await _Raw.raw(
            "DROP FUNCTION IF EXISTS claim_plain(text, uuid, timestamptz, text[], text[])"
        )

    manager.add_raw(create)
    manager.add_raw_backwards(drop)
    return manager
