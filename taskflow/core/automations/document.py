"""Reading an automation document: every problem named by a JSON pointer, or a rule.

A document is plain JSON (docs/automations.md)::

    {"name": "...", "trigger": {"on": "clock.at_risk"},
     "conditions": [<expression JSON>...], "actions": [{"do": "notify", ...}...],
     "enrollment": {"policy": "once_per_window", "window_hours": 24}}

:func:`read` never raises on bad input: it returns the problems, each with the
pointer of the part at fault, so a lead sees exactly what to fix before saving.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from taskflow.core.automations import blocks
from taskflow.core.definition.conditions import expr as ex
from taskflow.core.definition.conditions import expr_data

#: Bounds that keep a rule small enough to read and cheap to evaluate on every event.
MAX_ACTIONS = 20
MAX_CONDITIONS = 20
MAX_EXPRESSION_NODES = 200
MAX_TEXT = 2000
MAX_WINDOW_HOURS = 24 * 366


@dataclass(frozen=True)
class Problem:
    """One thing wrong with a document: where (a JSON pointer), a code, and why."""

    pointer: str
    code: str
    message: str


@dataclass(frozen=True)
class Action:
    verb: str
    params: Mapping[str, Any]


@dataclass(frozen=True)
class Automation:
    """A valid rule, ready to be decided on events."""

    name: str
    trigger: str
    filters: Mapping[str, str]
    conditions: tuple[ex.Expr, ...]
    actions: tuple[Action, ...]
    policy: str = "every_time"
    window: timedelta | None = None
    document: Mapping[str, Any] = field(default_factory=dict)


def read(doc: Any) -> Automation | list[Problem]:
    """The rule the document describes, or every problem found in it."""
    if not isinstance(doc, Mapping):
        return [Problem("", "not_an_object", "an automation is a JSON object")]
    problems: list[Problem] = []
    unknown = sorted(set(doc) - {"name", "trigger", "conditions", "actions", "enrollment"})
    problems += [Problem(f"/{k}", "unknown_key", f"unknown key {k!r}") for k in unknown]
    name = doc.get("name")
    if not isinstance(name, str) or not name.strip() or len(name) > 200:
        problems.append(Problem("/name", "bad_name", "name is text of 1 to 200 characters"))
    trigger, filters = _trigger(doc.get("trigger"), problems)
    conditions = _conditions(doc.get("conditions", []), problems)
    actions = _actions(doc.get("actions"), problems)
    policy, window = _enrollment(doc.get("enrollment", {"policy": "every_time"}), problems)
    problems += _loops(trigger, filters, actions)
    if problems:
        return problems
    return Automation(
        name=str(name),
        trigger=trigger,
        filters=filters,
        conditions=conditions,
        actions=actions,
        policy=policy,
        window=window,
        document=dict(doc),
    )


def _trigger(doc: Any, problems: list[Problem]) -> tuple[str, dict[str, str]]:
    if not isinstance(doc, Mapping) or not isinstance(doc.get("on"), str):
        problems.append(Problem("/trigger", "bad_trigger", 'trigger is {"on": "<event kind>"}'))
        return "", {}
    kind = doc["on"]
    if kind not in blocks.TRIGGERS:
        known = ", ".join(blocks.TRIGGERS)
        problems.append(
            Problem("/trigger/on", "unknown_trigger", f"{kind!r} is not one of {known}")
        )
        return "", {}
    allowed = blocks.TRIGGER_FILTERS.get(kind, ())
    filters: dict[str, str] = {}
    for key, value in doc.items():
        if key == "on":
            continue
        if key not in allowed or not isinstance(value, str):
            problems.append(
                Problem(f"/trigger/{key}", "bad_filter", f"{kind} narrows only on {allowed or '-'}")
            )
        else:
            filters[key] = value
    return kind, filters


def _conditions(doc: Any, problems: list[Problem]) -> tuple[ex.Expr, ...]:
    if not isinstance(doc, list) or len(doc) > MAX_CONDITIONS:
        problems.append(
            Problem("/conditions", "bad_conditions", f"a list of at most {MAX_CONDITIONS}")
        )
        return ()
    found = (condition(item, f"/conditions/{i}", problems) for i, item in enumerate(doc))
    return tuple(cond for cond in found if cond is not None)


def condition(item: Any, pointer: str, problems: list[Problem]) -> ex.Expr | None:
    """One condition (a rule's, or a wait node's ``until``); None, with its problem, when bad."""
    if _size(item) > MAX_EXPRESSION_NODES:
        problems.append(
            Problem(pointer, "too_large", f"at most {MAX_EXPRESSION_NODES} nodes per condition")
        )
        return None
    try:
        cond = expr_data.from_json(_event_as_item(item))
    except (KeyError, TypeError, ValueError, IndexError, AttributeError) as err:
        problems.append(Problem(pointer, "bad_expression", f"not an expression: {err}"))
        return None
    roots = {ref.root for ref in expr_data.refs(cond)}
    bad = sorted(roots - {"subject", "item", "actor"})
    if bad:
        allowed = ", ".join(blocks.CONDITION_ROOTS)
        problems.append(
            Problem(pointer, "bad_reference", f"reads {', '.join(bad)}; only {allowed}")
        )
        return None
    return cond


def _event_as_item(doc: Any) -> Any:
    """``event.<fact>`` is read through the expressions' ``item`` root (the event's facts).

    The expression language has fixed roots; in an automation the item a condition
    looks at is the event, so the friendlier name is mapped onto it here.
    """
    if isinstance(doc, Mapping):
        ref = doc.get("ref")
        if isinstance(ref, str) and (ref == "event" or ref.startswith("event.")):
            return {**doc, "ref": "item" + ref[len("event") :]}
        return {k: _event_as_item(v) for k, v in doc.items()}
    if isinstance(doc, list):
        return [_event_as_item(v) for v in doc]
    return doc


def _size(doc: Any) -> int:
    """Nodes in a JSON value, counted without recursion (a hostile document may be deep)."""
    count, stack = 0, [doc]
    while stack:
        node = stack.pop()
        count += 1
        if count > MAX_EXPRESSION_NODES:
            return count
        if isinstance(node, Mapping):
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return count


def _actions(doc: Any, problems: list[Problem]) -> tuple[Action, ...]:
    if not isinstance(doc, list) or not 1 <= len(doc) <= MAX_ACTIONS:
        problems.append(Problem("/actions", "bad_actions", f"a list of 1 to {MAX_ACTIONS} actions"))
        return ()
    out: list[Action] = []
    for i, item in enumerate(doc):
        pointer = f"/actions/{i}"
        verb = str(item.get("do")) if isinstance(item, Mapping) else ""
        block = blocks.ACTIONS.get(verb)
        if block is None or not isinstance(item, Mapping):
            known = ", ".join(blocks.ACTIONS)
            problems.append(Problem(f"{pointer}/do", "unknown_action", f"do is one of {known}"))
            continue
        params = {k: v for k, v in item.items() if k != "do"}
        before = len(problems)
        for key in block.required + block.expressions:
            if key not in params:
                problems.append(Problem(f"{pointer}/{key}", "missing", f"{verb} needs {key!r}"))
        for key, value in params.items():
            if key in block.objects:
                problems.extend(_flat(f"{pointer}/{key}", key, value))
            elif key in block.expressions:
                condition(value, f"{pointer}/{key}", problems)
            elif key not in block.required + block.optional:
                problems.append(
                    Problem(f"{pointer}/{key}", "unknown_key", f"{verb} takes no {key!r}")
                )
            elif not _short(value):
                problems.append(
                    Problem(f"{pointer}/{key}", "wrong_type", f"{key} is a short text or number")
                )
        if verb in ("delay", "wait"):
            problems.extend(_delay(pointer, params))
        if len(problems) == before:
            out.append(Action(verb, params))
    return tuple(out)


def _delay(pointer: str, params: Mapping[str, Any]) -> list[Problem]:
    """A delay's ``minutes`` (and ``business``), a wait's ``timeout_minutes``."""
    name = "minutes" if "minutes" in params else "timeout_minutes"
    minutes, business = params.get(name), params.get("business", False)
    found = []
    if (
        not isinstance(minutes, int)
        or isinstance(minutes, bool)
        or not 1 <= minutes <= blocks.MAX_DELAY_MINUTES
    ):
        why = f"{name} is a whole number, 1 to {blocks.MAX_DELAY_MINUTES}"
        found.append(Problem(f"{pointer}/{name}", "bad_delay", why))
    if not isinstance(business, bool):
        found.append(Problem(f"{pointer}/business", "wrong_type", "business is true or false"))
    return found


def _short(value: Any) -> bool:
    return isinstance(value, str | int | float | bool) and len(str(value)) <= MAX_TEXT


#: Fields a flat object parameter (a payload) may hold.
MAX_OBJECT_KEYS = 20


def _flat(pointer: str, key: str, value: Any) -> list[Problem]:
    """The problems of a flat object parameter: short text keys, short scalar values."""
    if not isinstance(value, Mapping) or len(value) > MAX_OBJECT_KEYS:
        why = f"{key} is an object of at most {MAX_OBJECT_KEYS} fields"
        return [Problem(pointer, "wrong_type", why)]
    return [
        Problem(f"{pointer}/{name}", "wrong_type", f"{name} is a short text or number")
        for name, inner in value.items()
        if not _short(inner) or len(str(name)) > MAX_TEXT
    ]


def _enrollment(doc: Any, problems: list[Problem]) -> tuple[str, timedelta | None]:
    policy = doc.get("policy") if isinstance(doc, Mapping) else None
    if policy not in blocks.ENROLLMENT_POLICIES:
        known = ", ".join(blocks.ENROLLMENT_POLICIES)
        problems.append(Problem("/enrollment/policy", "bad_policy", f"policy is one of {known}"))
        return "every_time", None
    if policy != "once_per_window":
        return str(policy), None
    hours = doc.get("window_hours")
    if not isinstance(hours, int) or isinstance(hours, bool) or not 1 <= hours <= MAX_WINDOW_HOURS:
        problems.append(
            Problem(
                "/enrollment/window_hours",
                "bad_window",
                f"once_per_window needs window_hours, 1 to {MAX_WINDOW_HOURS}",
            )
        )
        return str(policy), None
    return str(policy), timedelta(hours=hours)


def _loops(trigger: str, filters: Mapping[str, str], actions: tuple[Action, ...]) -> list[Problem]:
    """A rule that raises the very event it listens to would feed itself: refused at save.

    Longer loops (two rules feeding each other) are caught while running by the depth
    guard in :mod:`taskflow.core.automations.decide`.
    """
    if trigger != "event.raised":
        return []
    listened = filters.get("event")
    return [
        Problem(
            f"/actions/{i}/event", "loop", f"raising {listened!r} would trigger this rule again"
        )
        for i, action in enumerate(actions)
        if action.verb == "raise_event" and (listened is None or action.params["event"] == listened)
    ]
