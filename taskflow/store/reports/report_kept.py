"""What a live slot keeps for the SLA report, written with its due instant.

The one writer of a decision (``unit_of_work.py``, statement ``deadlines`` in
``common/unit_of_work.sql``) writes each slot's due instant in one UPDATE that also keeps
on the slot what the report reads of a live slot without probing other tables: its time
to pickup, final from the first pickup (``core/common/unit_of_work.pickups``), and a copy of
its report clock (finished, else assigned: ``sla_*``) taken from the clock rows the
statement's upsert returns, as stored (a breach recorded earlier included). The
worker's breach record keeps the copy too (``mark_breached``). docs/reports.md, "What a
live slot carries".
"""

from __future__ import annotations

#: The columns of the report's clock a slot keeps a copy of (``sla_<column>``).
CLOCK_FIELDS = ("milestone", "calendar", "budget_us", "working_days", "pauses", "met_at", "due_at",
        "breached_at")  # fmt: skip
