"""Workflows whose candidate rules have residual parts (tests/api/test_candidate_rules.py)."""

from __future__ import annotations

from taskflow import Route, Slot, State, Workflow, subject, who


class Regional(Workflow):
    """A request only a manager of the request's region may approve."""

    name = "regional-approval"
    tracks = "request"
    calendar = "uk-london"

    waiting = State(
        initial=True,
        slots=[
            Slot(
                "approve",
                # Compiles to the key attr:region=<region> plus the residual rule role:manager.
                candidates=who.role("manager") & (who.attr("region") == subject.region),
            )
        ],
        then=[Route("done")],
    )
    done = State(terminal=True)


class Paired(Workflow):
    """A check for people in finance who are also in the UK finance group."""

    name = "paired-check"
    tracks = "check"
    calendar = "uk-london"

    waiting = State(
        initial=True,
        slots=[Slot("check", candidates=who.role("finance") & who.group("finance-uk"))],
        then=[Route("done")],
    )
    done = State(terminal=True)
