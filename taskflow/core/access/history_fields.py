"""The access rules of history's and insights' fields (docs/history.md, docs/insights.md),
merged into ``access_fields.FIELDS``: a run's own history is read as the run is; counts and
insights are reports."""

from __future__ import annotations

from typing import Final

FIELDS: Final[dict[str, str]] = {
    "Run.stateAt": "run.read",
    "Run.history": "run.read",
    "Query.stateCounts": "report",
    "Query.insights": "report",
    "Run.undoable": "run.read",
    "Run.undoTarget": "run.read",
    "Mutation.undo": "undo",
}
#: Values of an object the caller was already allowed to read.
_PARENT_FIELDS = {
    "StateVisit": "state enteredAt leftAt via actor entryId undoneBy",
    "StateCount": "state runs",
    "StateCounts": "workflow at states",
    "Insights": "since until rows pipeline funnel",
    "WorkflowInsight": "workflow version live waitingOnPeople waitingOnSteps needingAttention "
    "started finished cancelled failed endToEnd endToEndBusiness breachRate failureRate "
    "regressions",
    "Percentiles": "p50 p95 p99 samples fewSamples",
    "PipelineState": "state live timeInState reopenRate pickupLatency pickupLatencyBusiness "
    "refusalRate",
    "FunnelState": "state reached live completed cancelled",
    "UndoTarget": "state reverses redo until",
}
FIELDS.update({f"{t}.{f}": "parent" for t, fs in _PARENT_FIELDS.items() for f in fs.split()})
