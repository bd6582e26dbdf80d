"""Load-time checks of automatic steps: actions, their routes, retry policies, ``every``.

Codes (docs/automatic-steps.md, "Validation"): ``BAD_ACTION``,
``ENTRY_ACTION_ROUTES``, ``AUTOMATIC_WITH_ROUTES``, ``NO_SUCCESS_ROUTE``,
``NO_FALLBACK_ROUTE`` and ``ROUTE_SHADOWED`` (as for ``then``), ``UNKNOWN_STATE``,
``RETRY_WITHOUT_ACTION``, ``BAD_RETRY``, ``BAD_EVERY``, ``BAD_TIMEOUT``. Whether an
action imports is checked where definitions load (``service/steps/step_actions.py``).
"""

from __future__ import annotations

from datetime import timedelta
from typing import Final

from taskflow.core.definition import budgets as bu
from taskflow.core.definition import retries
from taskflow.core.definition import steps as st
from taskflow.core.definition.checks.checking import Checker
from taskflow.core.definition.model import State

#: What ``on_success`` conditions may read.
SUCCESS_ROOTS: Final = ("subject", "payload", "result", "actor")


def _action(c: Checker, where: str, action: object) -> None:
    path = st.action_path(action) if isinstance(action, str) or callable(action) else None
    if path is None or not st.well_formed(path):
        c.add(
            "BAD_ACTION",
            where,
            f"the action {action!r} is not an import path or a function",
            "give action='package.module:function' (an async function) or the function itself",
        )


def state(c: Checker, s: State) -> None:
    """Every check of a state's automatic parts (nothing for a state without them)."""
    where = f"state {s.name!r}"
    for i, t in enumerate(s.timeouts):
        runs = [a for a in t.actions if a.kind == "run"]
        for a in runs:
            _action(c, f"{where} / timeout {t.name or i + 1}", a.step)
        if runs and any(a.kind == "move" for a in t.actions):
            c.add(
                "BAD_TIMEOUT",
                f"{where} / timeout {t.name or i + 1}",
                "the timeout both runs an action and moves the run",
                "keep the run where it is (drop move_to), or move it and run the action "
                "in the target state",
            )
    for i, every in enumerate(s.every):
        _every(c, f"{where} / every {every.name or i + 1}", every)
    if s.action is None:
        if s.retry is not None or s.on_error or s.success_routes:
            c.add(
                "RETRY_WITHOUT_ACTION",
                where,
                "retry, on_success or on_error is declared but the state runs no action",
                "add action='package.module:function', or drop them",
            )
        return
    _action(c, where, s.action)
    if s.retry is not None:
        _policy(c, f"{where} / retry", s.retry)
    if s.entry_action:
        if s.on_error or s.success_routes:
            c.add(
                "ENTRY_ACTION_ROUTES",
                where,
                "the state runs its action beside its slots and does not wait for it, so "
                "on_success and on_error routes would never be taken",
                "route with then=[...] as for any state with slots, or move the action to a "
                "state of its own (an automatic state)",
            )
        return
    if s.routes:
        c.add(
            "AUTOMATIC_WITH_ROUTES",
            where,
            "an automatic state declares then=[...]; it leaves by on_success and on_error",
            "write the routes as on_success=[...]",
        )
    if s.terminal:
        c.add(
            "TERMINAL_WITH_WORK",
            where,
            "a terminal state runs an action",
            "make the state non-terminal and route its on_success to a terminal state",
        )
    _routes(c, where, s)


def _routes(c: Checker, where: str, s: State) -> None:
    routes = s.success_routes
    for route in routes:
        c.target(where, "an on_success route", route.to)
        c.condition(where, f"the on_success route to {route.to!r}", route.when, SUCCESS_ROOTS)
    for route in routes[:-1]:
        if route.when is None:
            c.add(
                "ROUTE_SHADOWED",
                where,
                f"the unconditional on_success route to {route.to!r} comes before others, "
                "which can never be taken",
                "put the on_success route without a condition last, as the fallback",
            )
    for e in s.on_error:
        if not isinstance(e, st.OnError):
            c.add(
                "BAD_ACTION",
                where,
                f"on_error holds {e!r}",
                "write on_error=[OnError('<state>', errors=[SomeError])]",
            )
            continue
        c.target(where, "an on_error route", e.to)
    other = any(s.moves) or any(a.target for t in s.timeouts for a in t.actions)
    if not routes and not other:
        c.add(
            "NO_SUCCESS_ROUTE",
            where,
            "the automatic state has no on_success route and no other way out",
            "add on_success=['<state>'] (the state the run goes to once the action succeeds)",
        )
    elif routes and all(r.when is not None for r in routes) and not other:
        c.add(
            "NO_FALLBACK_ROUTE",
            where,
            "every on_success route has a condition and there is no other way out: a result "
            "that matches none would leave the run stuck",
            "add a last on_success route without a condition, or a move or timeout",
        )


def _policy(c: Checker, where: str, p: retries.Policy) -> None:
    fix = "write retry=Exponential(first=timedelta(seconds=10), max_attempts=5)"
    if not c.is_a(where, "retry", p, retries.Policy, "BAD_RETRY", "a policy", fix):
        return
    wrong = []
    if not isinstance(p.max_attempts, int) or p.max_attempts < 1:
        wrong.append(f"max_attempts={p.max_attempts!r} (give 1 or more)")
    if not 0 <= p.jitter <= 1:
        wrong.append(f"jitter={p.jitter!r} (give a fraction from 0 to 1)")
    if p.timeout is not None and p.timeout <= timedelta(0):
        wrong.append("a timeout of zero or less (give a positive timedelta, or None)")
    if any(w <= timedelta(0) for w in p.waits()):
        wrong.append("a wait of zero or less (give positive timedeltas)")
    if isinstance(p, retries.Exponential) and p.factor < 1:
        wrong.append(f"factor={p.factor!r} (give 1 or more)")
    if p.time not in ("real", "business"):
        wrong.append(f"time={p.time!r} (give 'real' or 'business')")
    elif p.time == "business" and p.calendar is None and c.d.calendar is None:
        wrong.append("business time without a calendar (set calendar=, or the workflow's)")
    c.calendar(where, p.calendar)
    for problem in wrong:
        c.add("BAD_RETRY", where, f"the retry policy has {problem}", "fix that value")


def _every(c: Checker, where: str, every: st.Every) -> None:
    fix = "write every=[every(real.days(7), action='pkg.mod:fn', until=real.days(28))]"
    if not c.is_a(where, "every", every, st.Every, "BAD_EVERY", "recurring work", fix):
        return
    _action(c, where, every.action)
    interval, until = every.interval, every.until
    if not isinstance(interval, bu.Budget) or not isinstance(until, bu.Budget):
        c.add(
            "BAD_EVERY",
            where,
            "interval and until must be plain budgets (business.days(1), real.hours(4))",
            "give plain budgets; budget_by tables are not accepted here",
        )
        return
    c.budget(where, "the interval", interval, ())
    c.budget(where, "until", until, ())
    if interval.kind != until.kind:
        c.add(
            "BAD_EVERY",
            where,
            f"the interval is {interval.kind} time but until is {until.kind} time",
            "measure both in the same kind of time",
        )
        return
    if _seconds(until) <= _seconds(interval):
        c.add(
            "BAD_EVERY",
            where,
            f"until ({until}) is not longer than the interval ({interval}): it would never run",
            "make until strictly longer than the interval",
        )


def _seconds(b: bu.Budget) -> float:
    resolved = bu.resolve_budget(b, {})
    assert resolved is not None
    return resolved.business_time().total_seconds()
