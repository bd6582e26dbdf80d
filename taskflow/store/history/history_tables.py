"""The table of state spans (``state_span``): each run's effective visits of its states,
kept by a trigger on the timeline (``history/spans.sql``), read by ``stateCounts`` and
``runs(filter: {stateAt})``. The table is partitioned by month of ``left_at`` (migration
2026-12-05T02:00): the schema declares it by ``partitions.SPANS_TABLE``, not this class."""

from __future__ import annotations

from piccolo.columns import BigInt, BigSerial, ForeignKey, Timestamptz, Varchar
from piccolo.columns.base import OnDelete
from piccolo.table import Table

from taskflow.store.runs.run_tables import Run


class StateSpan(Table, tablename="state_span"):
    """A run's stay in one state, from the timeline line that entered it until it left
    ('infinity' while it stands); ``undone_by`` set: an undo rewound it (out of every count)."""

    id = BigSerial(primary_key=True)
    run = ForeignKey(references=Run, null=False, on_delete=OnDelete.cascade)
    workflow = Varchar(length=100)
    state = Varchar(length=100)
    entered_at = Timestamptz()
    left_at = Timestamptz()
    #: The ``state.entered`` line (``audit_event.id``) that opened it.
    line = BigInt()
    #: The undo's line that rewound it (null: it stands).
    undone_by = BigInt(null=True, default=None)
