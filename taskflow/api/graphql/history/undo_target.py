"""``Run.undoable`` and ``Run.undoTarget``: what an undo would do now, for the caller
(docs/history.md, "Undo"); the mutation is in ``history/undo.py``."""

from __future__ import annotations

from datetime import datetime

import strawberry
from strawberry.dataloader import DataLoader

from taskflow.api.graphql.common.context import Info, caller
from taskflow.core.history import undo as rule
from taskflow.service.history import undoing


@strawberry.type(description="What an undo would do now (Run.undoTarget).")
class UndoTarget:
    state: str = strawberry.field(description="The state the run would return to.")
    reverses: strawberry.ID = strawberry.field(
        description="The timeline line (state.entered) it would rewind (Run.timeline's id)."
    )
    redo: bool = strawberry.field(description="True when that line is itself an undo.")
    until: datetime | None = strawberry.field(
        description="Until when it may be undone (null: as long as it stands)."
    )


async def target_of_run(info: Info, run_id: str) -> UndoTarget | None:
    """``Run.undoTarget`` for the caller (the run was already found visible to them),
    batched per request: a page of runs asking ``undoable`` or ``undoTarget`` (or both)
    costs two statements, not two a run."""
    loaders = info.context.loaders
    if "undo_target" not in loaders:
        services, actor = info.context.services, await caller(info)

        async def load(keys: list[str]) -> list[rule.Target | None]:
            found = await undoing.undo_targets(services, actor, keys)
            return [found[k] for k in keys]

        loaders["undo_target"] = DataLoader(load_fn=load)
    found: rule.Target | None = await loaders["undo_target"].load(run_id)
    if found is None:
        return None
    within = found.policy.within
    return UndoTarget(
        state=found.state,
        reverses=strawberry.ID(str(found.reverses)),
        redo=found.redo,
        until=found.left_at + within if within is not None else None,
    )
