"""A workflow whose version 2 renames a state and its slot, restarts a clock and adds a slot
(test_run_migration_renames.py)."""

from __future__ import annotations

from taskflow import Route, Slot, State, Workflow, business, migration, milestone, reminder, who


class DeskV1(Workflow):
    """Finance looks at a request."""

    name = "desk"
    version = 1
    tracks = "desk"
    calendar = "uk-london"

    triage = State(
        initial=True,
        slots=[
            Slot(
                "look",
                candidates=who.role("finance"),
                milestones=[
                    milestone.assigned(within=business.hours(4)),
                    milestone.finished(within=business.hours(8)),
                ],
                reminders=[reminder.at(0.5, of="finished", notify=who.holder())],
            )
        ],
        then=[Route("done")],
    )
    done = State(terminal=True)


class DeskV2(Workflow):
    """Triage is now intake, its look an assessment with a longer budget, and a second look."""

    name = "desk"
    version = 2
    tracks = "desk"
    calendar = "uk-london"
    migrations = [
        migration.from_version(
            1,
            triage=migration.stay("intake", slots={"look": "assess"}, restart_clocks=["finished"]),
        )
    ]

    intake = State(
        initial=True,
        slots=[
            Slot(
                "assess",
                label="Assess the request",
                candidates=who.role("finance"),
                milestones=[
                    milestone.assigned(within=business.hours(4)),
                    milestone.finished(within=business.hours(16)),
                ],
                reminders=[reminder.at(0.5, of="finished", notify=who.holder())],
            ),
            Slot("second_look", candidates=who.role("finance")),
        ],
        then=[Route("done")],
    )
    done = State(terminal=True)
