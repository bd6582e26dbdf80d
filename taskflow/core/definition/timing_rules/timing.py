"""What a run deadline and a slot expiry share: an instant ``after`` a start (a budget) or
``at`` a subject date (read in ``zone``, ends of days on ``calendar``)."""

from __future__ import annotations

from typing import Any

from taskflow.core.definition import budgets as bu
from taskflow.core.definition.conditions import expr as ex
from taskflow.core.definition.conditions import expr_data as exd


class Timing:
    """The ``after`` / ``at`` / ``zone`` / ``calendar`` of a rule (its dataclass declares them)."""

    after: bu.BudgetLike | None
    at: ex.Expr | None
    zone: str | None
    calendar: str | None

    @property
    def attribute(self) -> str:
        """The subject attribute an ``at`` rule reads, dotted (``due_date``)."""
        if isinstance(self.at, ex.Ref):
            return ".".join(self.at.parts)
        return ex.describe(self.at) if self.at is not None else ""

    def timing_json(self) -> dict[str, Any]:
        """``{"after", "at", "zone", "calendar"}``."""
        return {
            "after": self.after.to_json() if self.after is not None else None,
            "at": exd.to_json(self.at) if self.at is not None else None,
            "zone": self.zone,
            "calendar": self.calendar,
        }
