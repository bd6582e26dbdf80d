"""A slot that expires: after a duration from its opening, or at an instant the subject names.

``Slot(..., expires=expire.after(real.days(14)))`` or
``expires=expire.at(subject.offer_valid_until, zone="Europe/Berlin")``. When the instant
comes the slot closes with the outcome ``expired`` (its links stop working, its holder is
released) and the state's completion rule and routes read it as ``expired.<slot name>``
(see docs/sla.md, "Expiry"). ``warn`` lists notices sent a real-time span before the
instant (``expire.warning(real.days(2), notify=..., with_link=True)``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from taskflow.core.definition import audience as au
from taskflow.core.definition import budgets as bu
from taskflow.core.definition import sla
from taskflow.core.definition.conditions import expr as ex
from taskflow.core.definition.timing_rules import timing


@dataclass(frozen=True, eq=False)
class ExpiryWarning:
    """A notice ``before`` (real time) the slot expires: its actions (notify, escalate...)."""

    before: bu.Budget
    actions: tuple[sla.Action, ...]

    def describe(self) -> str:
        """``2 real days before it expires: notify email:ops@... with a link``."""
        return f"{self.before} before it expires: " + ", ".join(a.describe() for a in self.actions)

    def to_json(self) -> Any:
        """``{"before", "actions"}``."""
        return {"before": self.before.to_json(), "actions": [a.to_json() for a in self.actions]}


@dataclass(frozen=True, eq=False)
class Expire(timing.Timing):
    """When a slot expires: ``after`` its opening (business or real time, a budget table
    allowed), or ``at`` the instant a subject path holds (read in ``zone`` when it carries no
    offset; a bare date means the end of that day there)."""

    after: bu.BudgetLike | None = None
    at: ex.Expr | None = None
    zone: str | None = None
    calendar: str | None = None
    warnings: tuple[ExpiryWarning, ...] = ()

    def describe(self) -> str:
        """``after 14 real days`` or ``at subject.offer_valid_until``."""
        if self.at is not None:
            text = f"at {ex.describe(self.at)}" + (f" ({self.zone})" if self.zone else "")
        else:
            text = f"after {self.after}"
        return text

    def to_json(self) -> Any:
        """``{"after", "at", "zone", "calendar", "warnings"}``."""
        return self.timing_json() | {
            "warnings": [w.to_json() for w in self.warnings],
        }


class _ExpireFactory:
    """The ``expire`` namespace of the DSL."""

    def after(
        self,
        within: bu.BudgetLike,
        *,
        calendar: str | None = None,
        warn: tuple[ExpiryWarning, ...] | list[ExpiryWarning] = (),
    ) -> Expire:
        """The slot expires ``within`` after it opened (business time on ``calendar``, else
        the workflow's; or real time)."""
        return Expire(after=within, calendar=calendar, warnings=tuple(warn))

    def at(
        self,
        path: ex.Expr,
        *,
        zone: str | None = None,
        warn: tuple[ExpiryWarning, ...] | list[ExpiryWarning] = (),
    ) -> Expire:
        """The slot expires at the instant ``path`` holds (ISO 8601: a date-time with an
        offset, or in ``zone`` (else UTC) without one; a bare date: the end of that day)."""
        return Expire(at=path, zone=zone, warnings=tuple(warn))

    def warning(
        self,
        before: bu.Budget,
        *,
        notify: au.Who | None = None,
        with_link: bool = False,
        escalate_to: au.Who | None = None,
        raise_priority_to: int | None = None,
    ) -> ExpiryWarning:
        """A notice ``before`` (real time) the slot expires ("expires in 2 days")."""
        found = sla.actions(
            notify=notify,
            with_link=with_link,
            escalate_to=escalate_to,
            raise_priority_to=raise_priority_to,
        )
        return ExpiryWarning(before, found)


expire: Final = _ExpireFactory()
