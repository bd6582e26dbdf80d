"""The Piccolo table of the forecast watch (``tables.TABLES`` lists it; docs/forecast.md)."""

from __future__ import annotations

from piccolo.columns import BigSerial, Boolean, DoublePrecision, ForeignKey, Timestamptz
from piccolo.columns.base import OnDelete
from piccolo.table import Table

from taskflow.store.runs.run_tables import Slot


class SlotForecast(Table, tablename="slot_forecast"):
    """A live slot's breach forecast as the watch last read it, and whether it is flagged:
    ``clock.forecast_at_risk`` was written as the flag went up (once, until it goes down).
    The row goes with its slot."""

    id = BigSerial(primary_key=True)
    slot = ForeignKey(references=Slot, null=False, unique=True, on_delete=OnDelete.cascade)
    flagged = Boolean(default=False)
    #: The last forecast (None: not enough history).
    probability = DoublePrecision(null=True, default=None)
    evaluated_at = Timestamptz()


TABLES: tuple[type[Table], ...] = (SlotForecast,)
