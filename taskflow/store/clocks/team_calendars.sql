-- Teams' own calendars (store/clocks/team_calendars.py): the calendar chain's `team` link.

-- name: set
-- Team $1 counts on calendar $2 from $3, set by $4 (one row per team in a workspace).
INSERT INTO team_calendar (team, calendar, set_at, set_by) VALUES ($1, $2, $3, $4)
ON CONFLICT (workspace, team) DO UPDATE
SET calendar = excluded.calendar, set_at = excluded.set_at, set_by = excluded.set_by

-- name: clear
-- Team $1 has no calendar of its own any more.
DELETE FROM team_calendar WHERE team = $1

-- name: of_teams
-- The calendars of the teams among $1 that have one.
SELECT team, calendar FROM team_calendar WHERE team = ANY($1::text[])

-- name: listed
-- Every team with a calendar of its own, by team.
SELECT team, calendar, set_at, set_by FROM team_calendar ORDER BY team

-- name: live_slots
-- The live slots (statuses $2) open to team $1, with their runs and the definition version
-- those run on (not the slot's row version), in the order their runs lock.
SELECT s.id::text AS slot, s.run::text AS run, s.workflow, r.definition_version AS version,
       s.state, s.name
FROM slot s JOIN run r ON r.id = s.run
WHERE s.audience @> ARRAY[$1::text] AND s.status = ANY($2::text[])
ORDER BY s.run, s.id
