"""Child runs in a definition: a state that starts runs of other workflows, by label.

A state with ``children`` starts one run of each named workflow when the run enters it
(docs/composition.md). An *awaited* child (the default) parks the parent in the state
until it ends; its outcome (terminal state, status, failure kind and reason, the result
document its workflow declares) is then readable as ``child("<label>").state``,
``child("<label>").result.<field>`` by the state's routes and every later condition. A
*bare* child (``awaited=False``) is started and not waited for.

A child that ends badly raises in the parent: ``cancelled`` (the child run was
cancelled), ``refused`` (it could not be started) or the kind its terminal state
declares (``State(terminal=True, failure="expired")``; ``failure=True`` is ``failed``).
The state's ``catch`` routes take it by kind; an uncaught failure cancels the parent,
naming the child's failure, and so travels up the chain.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import KW_ONLY, dataclass
from typing import Any, Final

from taskflow.core.definition.conditions import expr as ex
from taskflow.core.definition.conditions import expr_data as exd

#: Where a run keeps its children's outcomes among its results (``run.results``): not a
#: state name (states are lower-case words), so ``result.<state>`` never meets it.
RESULTS_KEY: Final = "@children"
#: Failure kinds the engine itself raises (a terminal state may declare others).
CANCELLED, REFUSED, FAILED = "cancelled", "refused", "failed"


def child(label: str) -> ex.Ref:
    """The outcome of the child run started under ``label``: ``child("assessment").state``,
    ``.status``, ``.failure`` (a kind, or missing), ``.reason``, ``.result.<field>``."""
    return ex.Ref("child", (label,))


#: Seconds a failed compensation waits for its second attempt (doubled for each later one).
DEFAULT_COMPENSATION_BACKOFF = 60.0


@dataclass(frozen=True, eq=False)
class Child:
    """Start a run of ``workflow`` on entering the state, under the literal ``label``.

    The child's subject: by default the parent's subject when the child tracks the same
    type, else a subject of the child's type with the parent's external id. ``external_id``
    (an expression over the parent's subject, e.g. ``subject.vendor_id``) names another;
    ``attributes`` (name -> expression or value) makes its attributes (default: the
    parent's). ``awaited=False`` starts it bare: nobody waits for it.

    ``compensation`` makes it a **saga step**: the workflow that undoes it. When the state
    it was started in is left unfinished (a sibling failed or is still running, or the run
    was cancelled there), each completed step's compensation is started, in the reverse
    order the steps completed, on the same subject (docs/composition.md, "Sagas"). A
    compensation that fails is started again, up to ``compensation_attempts`` runs in all,
    ``compensation_backoff`` seconds after the failure, doubled at each further attempt
    (60, 120, 240...: whatever made it fail gets time to pass); the last failing parks the
    run in needs attention (``COMPENSATION_FAILED``).
    """

    workflow: str
    _: KW_ONLY
    label: str
    awaited: bool = True
    external_id: ex.Expr | None = None
    attributes: Mapping[str, Any] | None = None
    compensation: str | None = None
    #: How many times a compensation that fails is started (the first included).
    compensation_attempts: int = 3
    #: Seconds between a failed compensation and its next attempt, doubled each time.
    compensation_backoff: float = DEFAULT_COMPENSATION_BACKOFF

    def subject_spec(self, subject: Mapping[str, Any]) -> dict[str, Any]:
        """What the shell needs to find or make the child's subject, evaluated on the
        parent's subject now: ``{"external_id": str | None, "attributes": {...} | None}``."""
        env = ex.Env(subject=subject)
        external = None
        if self.external_id is not None:
            value = ex.value_of(self.external_id, env)
            external = None if value is ex.MISSING or value is None else str(value)
        attributes = None
        if self.attributes is not None:
            attributes = {}
            for name, given in self.attributes.items():
                value = ex.value_of(given, env) if isinstance(given, ex.Expr) else given
                attributes[name] = None if value is ex.MISSING else value
        spec: dict[str, Any] = {"external_id": external, "attributes": attributes}
        if self.compensation is not None:  # kept with the row: the saga's undo, if needed
            spec["compensation"] = self.compensation
            spec["compensation_attempts"] = self.compensation_attempts
            spec["compensation_backoff"] = self.compensation_backoff
        return spec

    def to_json(self) -> Any:
        """``{"workflow", "label", "awaited", "external_id", "attributes", "compensation"}``."""
        attrs = self.attributes
        found = {
            "workflow": self.workflow,
            "label": self.label,
            "awaited": self.awaited,
            "external_id": exd.to_json(self.external_id) if self.external_id is not None else None,
            "attributes": (
                None
                if attrs is None
                else {k: exd.to_json(v) if isinstance(v, ex.Expr) else v for k, v in attrs.items()}
            ),
        }
        if self.compensation is not None:  # absent otherwise: older versions hash the same
            found["compensation"] = self.compensation
            found["compensation_attempts"] = self.compensation_attempts
            if self.compensation_backoff != DEFAULT_COMPENSATION_BACKOFF:  # digests stay
                found["compensation_backoff"] = self.compensation_backoff
        return found


@dataclass(frozen=True, eq=False)
class Catch:
    """Go to ``to`` when an awaited child of the state fails with one of ``kinds`` (empty:
    any kind) and ``when`` holds (it may read ``child("<label>").reason``)."""

    to: str
    _: KW_ONLY
    kinds: Sequence[str] = ()
    when: ex.Expr | None = None
    label: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "kinds", tuple(self.kinds))

    def takes(self, label: str, kind: str, env: ex.Env) -> bool:
        """Whether this catch takes the failure ``kind`` of the child under ``label``."""
        if self.label is not None and self.label != label:
            return False
        return (not self.kinds or kind in self.kinds) and ex.matches(self.when, env)

    def to_json(self) -> Any:
        """``{"to", "kinds", "label", "when"}``."""
        return {
            "to": self.to,
            "kinds": list(self.kinds),
            "label": self.label,
            "when": exd.to_json(self.when) if self.when is not None else None,
        }


def failure_kind(failure: str | bool | None) -> str | None:
    """The failure kind a terminal state declares (``True`` is ``failed``), or None."""
    if failure is None or failure is False:
        return None
    return FAILED if failure is True else str(failure)


def outcomes(results: Mapping[str, Any]) -> Mapping[str, Any]:
    """The children's outcomes a run keeps among its results, by label."""
    found = results.get(RESULTS_KEY)
    return found if isinstance(found, Mapping) else {}


def all_back(results: Mapping[str, Any], labels: Sequence[str], visit: int) -> bool:
    """Whether every child in ``labels`` has ended for this ``visit`` of the state."""
    kept = outcomes(results)
    return all(
        isinstance(kept.get(label), Mapping) and kept[label].get("visit") == visit
        for label in labels
    )


def first_back(results: Mapping[str, Any], labels: Sequence[str], visit: int) -> bool:
    """Whether a child in ``labels`` ended well for this ``visit`` (first to finish wins)."""
    kept = outcomes(results)
    return any(
        isinstance(kept.get(label), Mapping)
        and kept[label].get("visit") == visit
        and not kept[label].get("failure")
        for label in labels
    )


def renamed(results: Mapping[str, Any], labels: Mapping[str, str]) -> Mapping[str, Any]:
    """``results`` with the children's outcomes under their new labels (a migration)."""
    kept = outcomes(results)
    if not labels or not kept:
        return results
    return {**results, RESULTS_KEY: {labels.get(k, k): v for k, v in kept.items()}}
