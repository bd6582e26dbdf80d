"""Load-time checks of a run deadline (``core/definition/timing_rules/deadline.py``).

Codes (docs/definitions.md, "Validation"): ``BAD_DEADLINE`` (neither or both of ``after``
and ``at``, or ``at`` not a subject field), ``UNKNOWN_TIME_ZONE``, ``UNKNOWN_CALENDAR``,
``UNKNOWN_STATE`` (a ``move_to`` naming no state), ``UNKNOWN_EVENT`` (a ``raise_event`` no
slot waits for), and the budget's and audiences' own.
"""

from __future__ import annotations

from taskflow.core.definition.checks.checking import Checker
from taskflow.core.definition.conditions import expr as ex
from taskflow.core.definition.timing_rules import deadline as dl

_WHERE = "deadline"


def check(c: Checker) -> None:
    """Every problem of the definition's ``deadline`` (none when it declares none)."""
    rule = c.d.deadline
    if rule is None:
        return
    if not isinstance(rule, dl.Deadline):
        c.add("BAD_DEADLINE", _WHERE, f"{rule!r} is not a Deadline", "write Deadline(...)")
        return
    if (rule.after is None) == (rule.at is None):
        c.add(
            "BAD_DEADLINE",
            _WHERE,
            "a deadline needs exactly one of after= and at=",
            "write Deadline(after=business.days(5)) or Deadline(at=subject.due_date)",
        )
    if rule.at is not None and not (isinstance(rule.at, ex.Ref) and rule.at.root == "subject"):
        c.add(
            "BAD_DEADLINE",
            _WHERE,
            f"at={ex.describe(rule.at)} is not a subject field",
            "write at=subject.<field>, e.g. subject.due_date",
        )
    if rule.after is not None:
        c.budget(_WHERE, "the deadline's duration", rule.after, ("subject",))
    problem = dl.zone_problem(rule.zone)
    if problem is not None:
        c.add(
            "UNKNOWN_TIME_ZONE",
            _WHERE,
            problem,
            "use an IANA time zone name, e.g. 'Europe/London' or 'America/New_York'",
        )
    c.calendar(_WHERE, rule.calendar)
    waited = {sl.waits_for for _, sl in c.d.slots()}
    for action in (*rule.on_breach, *rule.on_risk):
        if action.kind == "move":
            c.target(_WHERE, "the deadline's move_to", action.target)
        elif action.kind == "raise_event" and action.target not in waited:
            c.add(
                "UNKNOWN_EVENT",
                _WHERE,
                f"raise_event={action.target!r}: no slot waits for it",
                f"raise an event a slot waits for: {', '.join(sorted(waited)) or 'none'}",
            )
        c.who(_WHERE, f"the deadline's {action.kind}", action.who, ("subject",), ())
