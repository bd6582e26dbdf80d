"""Definitions as data: the JSON document, its digest, and a Mermaid state diagram.

The document is what the API serves and what a run pins: :func:`digest` is
the sha256 of its canonical form (sorted keys, no spaces, UTF-8), so any
change that could change behaviour, a budget, a condition, a hook's name,
changes the digest. Hooks appear by their qualified name, without module
(their code is not in the digest: change a hook's behaviour, bump the
version). Where a definition was loaded from is not in the document either.
"""

from __future__ import annotations

import hashlib
import json
from typing import TYPE_CHECKING, Any

from taskflow.core.definition import audience as au
from taskflow.core.definition import steps
from taskflow.core.definition.conditions import expr as ex
from taskflow.core.definition.conditions import expr_data as exd
from taskflow.core.definition.model import Route, Slot, State

if TYPE_CHECKING:
    from taskflow.core.definition.workflow import Definition

#: Bumped when the document's shape changes, so old digests are not compared with new ones.
DOCUMENT_FORMAT = 1


def _opt_expr(value: ex.Expr | None) -> Any:
    return exd.to_json(value) if value is not None else None


def _opt_who(value: au.Who | None) -> Any:
    return au.to_json(value) if value is not None else None


def _hook(fn: Any) -> str | None:
    # The qualified name only: a module's name depends on how its file was loaded,
    # and the digest must not change with the folder a definition is read from.
    return None if fn is None else str(getattr(fn, "__qualname__", type(fn).__qualname__))


def _slot(slot: Slot) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "name": slot.name,
        "waits_for": slot.waits_for,
        "label": slot.label,
        "description": slot.description,
        "fields": [f.to_json() for f in slot.fields],
        "candidates": _opt_who(slot.candidates),
        "delegates": _opt_who(slot.delegates),
        "armed": _opt_expr(slot.armed),
        "after": list(slot.after),
        "foreach": _opt_expr(slot.foreach_expr),
        "priority": slot.priority_rule.to_json(),
        "milestones": [m.to_json() for m in slot.milestones],
        "reminders": [r.to_json() for r in slot.reminders],
        "magic_link": slot.magic_link,
        "shareable": list(slot.shareable),
    }
    # Present only when declared, so the digests of definitions without it stay as they were.
    if slot.outsiders is not None:
        doc["outsiders"] = au.to_json(slot.outsiders)
    if slot.expires is not None:
        doc["expires"] = slot.expires.to_json()
    return doc


def _state(state: State) -> dict[str, Any]:
    return {
        "name": state.name,
        "label": state.label,
        "description": state.description,
        "initial": state.initial,
        "terminal": state.terminal,
        "pausing": state.pausing,
        "slots": [_slot(s) for s in state.slots],
        "done": state.completion.to_json(),
        "routes": [r.to_json() for r in state.routes],
        "moves": [m.to_json() for m in state.moves],
        "timeouts": [t.to_json() for t in state.timeouts],
        "preconditions": [p.to_json() for p in state.preconditions],
        "on_enter": _hook(state.on_enter),
        "on_exit": _hook(state.on_exit),
        "redirects": list(state.redirects),
    } | _automatic(state)


def _automatic(state: State) -> dict[str, Any]:
    """An automatic state's parts, only when declared: older digests stay as they were."""
    doc: dict[str, Any] = {}
    if state.action is not None:
        doc["action"] = steps.shown(state.action)
        doc["on_success"] = [r.to_json() for r in state.success_routes]
        doc["on_error"] = [e.to_json() for e in state.on_error]
        doc["retry"] = state.retry.to_json() if state.retry is not None else None
    if state.every:
        doc["every"] = [e.to_json() for e in state.every]
    if state.children:
        doc["children"] = [c.to_json() for c in state.children]
    if state.await_first:
        doc["await_first"] = True
    if state.catch:
        doc["catch"] = [c.to_json() for c in state.catch]
    if state.failure is not None:
        doc["failure"] = state.failure
    return doc


def document(definition: Definition) -> dict[str, Any]:
    """The plain JSON document of a definition (every value is JSON-able)."""
    doc: dict[str, Any] = {
        "format": DOCUMENT_FORMAT,
        "name": definition.name,
        "version": definition.version,
        "tracks": definition.tracks,
        "description": definition.description,
        "calendar": definition.calendar,
        "correlate_by": _opt_expr(definition.correlate_by),
        "initial_state": definition.initial_state.name if definition.states else None,
        "states": [_state(s) for s in definition.states],
    }
    if definition.events:  # only when declared: older digests stay as they were
        doc["events"] = [e.to_json() for e in definition.events]
    if definition.migrations:  # likewise
        doc["migrations"] = [m.to_json() for m in definition.migrations]
    if definition.result:  # likewise
        doc["result"] = {k: _value(v) for k, v in definition.result}
    if definition.deadline is not None:  # likewise
        doc["deadline"] = definition.deadline.to_json()
    if definition.subject_gone is not None:  # likewise
        doc["subject_gone"] = definition.subject_gone
    return doc


def _value(value: Any) -> Any:
    return exd.to_json(value) if isinstance(value, ex.Expr) else value


def canonical(doc: Any) -> bytes:
    """The canonical bytes of a JSON document: sorted keys, compact, UTF-8."""
    return json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def digest(definition: Definition) -> str:
    """``sha256:<hex>`` of the canonical document."""
    return "sha256:" + hashlib.sha256(canonical(document(definition))).hexdigest()


# -- Mermaid ------------------------------------------------------------------------------------


def _quote(text: str) -> str:
    """Mermaid labels cannot hold some characters; replace them with look-alikes."""
    text = text.replace(";", ",").replace('"', "'").replace("\n", " ")
    # Mermaid's entity syntax: a bare colon ends a label, braces open a composite state.
    return text.replace(":", "#58;").replace("{", "#123;").replace("}", "#125;")


def _slot_line(slot: Slot) -> str:
    parts = [f"slot {slot.name}"]
    if slot.foreach_expr is not None:
        parts.append(f"for each {ex.describe(slot.foreach_expr)}")
    if slot.candidates is not None:
        parts.append(f"by {au.describe(slot.candidates)}")
    if slot.after:
        parts.append("after " + ", ".join(slot.after))
    if slot.outsiders is not None:
        parts.append(f"links to {au.describe(slot.outsiders)}")
    if slot.armed is not None:
        parts.append(f"if {ex.describe(slot.armed)}")
    parts += [f"{m.kind} within {m.within}" for m in slot.milestones]
    return _quote(" · ".join(parts))


def mermaid(definition: Definition) -> str:
    """A Mermaid ``stateDiagram-v2``: states with their slots, routes, moves and timeouts."""
    lines = ["stateDiagram-v2", f"    %% {definition.key} {definition.digest}"]
    if definition.states:
        lines.append(f"    [*] --> {definition.initial_state.name}")
    if definition.events and definition.states:
        lines.append(f"    note left of {definition.initial_state.name}")
        lines += [f"        {_quote('event ' + e.describe())}" for e in definition.events]
        lines.append("    end note")
    for state in definition.states:
        if state.pausing:
            lines.append(f"    note right of {state.name}: clocks paused")
        if state.slots:
            lines.append(f"    note right of {state.name}")
            lines += [f"        {_slot_line(s)}" for s in state.slots]
            lines.append("    end note")
        edges = [(route.to, _route_label(state, route)) for route in state.routes]
        edges += [(move.to, "move " + move.name) for move in state.moves]
        edges += [
            (a.target, f"after {t.after}") for t in state.timeouts for a in t.actions if a.target
        ]
        edges += [
            (a.target, f"reminder on {slot.name}.{rem.milestone}")
            for slot in state.slots
            for rem in slot.reminders
            for a in rem.actions
            if a.target
        ]
        edges += [(target, "redirected on enter") for target in state.redirects]
        edges += [(c.to, f"caught {'/'.join(c.kinds) or 'failure'}") for c in state.catch]
        if state.children:
            lines.append(f"    note right of {state.name}")
            lines += [f"        {_quote(_child_line(c))}" for c in state.children]
            lines.append("    end note")
        lines += [f"    {state.name} --> {to}: {_quote(label)}" for to, label in edges]
        if state.terminal:
            lines.append(f"    {state.name} --> [*]")
    return "\n".join(lines) + "\n"


def _child_line(c: Any) -> str:
    return f"{'awaits' if c.awaited else 'starts'} {c.workflow} as {c.label}"


def _route_label(state: State, route: Route) -> str:
    if len(state.routes) == 1 and route.when is None:
        # The one way on: say when it is taken ("straight on" for a slot-less state).
        plain = state.completion.kind == "all" and not state.slots
        return "straight on" if plain else state.completion.describe()
    return "otherwise" if route.when is None else ex.describe(route.when)
