"""Child runs of a workflow that owns its subjects (docs/composition.md, "How a child runs").

``owned-case`` owns ``case`` subjects (``case.status`` is its state); ``case-opener``
awaits one on a case named like its document; ``case-writer`` would write the owned field.
"""

from __future__ import annotations

from taskflow import Catch, Child, Owns, Slot, State, Workflow, who


class OwnedCase(Workflow):
    """A case a finance clerk handles; it owns its case (``case.status``)."""

    name = "owned-case"
    tracks = "case"
    owns = Owns(field="status")

    open = State(
        initial=True, slots=[Slot("handle", candidates=who.role("finance"))], then="closed"
    )
    closed = State(terminal=True)


class CaseOpener(Workflow):
    """Opens a case for its document and waits for it to close."""

    name = "case-opener"
    tracks = "doc"

    waiting = State(
        initial=True,
        children=[Child("owned-case", label="case")],
        then="done",
        catch=[Catch("blocked", kinds=["refused"])],
    )
    done = State(terminal=True)
    blocked = State(terminal=True)


class CaseWriter(CaseOpener):
    """Would open a case already closed: the owned field is not its to write."""

    name = "case-writer"

    waiting = State(
        initial=True,
        children=[Child("owned-case", label="case", attributes={"status": "closed"})],
        then="done",
        catch=[Catch("blocked", kinds=["refused"])],
    )
