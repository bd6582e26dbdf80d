"""The parts of automatic steps: the action a state runs, its error routes, recurring work.

An action is an async Python callable named by import path (``"pkg.mod:post"``)
or given as the function itself (its path is then derived). The engine never
calls it: the worker does, outside any transaction (docs/automatic-steps.md).
What the action returns is stored on the run under the state's name and read by
later conditions as ``result.<state>.<field>``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from taskflow.core.definition import budgets as bu
from taskflow.core.definition.conditions import expr as ex
from taskflow.core.definition.conditions import expr_data as exd

#: What authors give as an action: an import path ``module:function`` or the function.
ActionLike = str | Callable[..., Any]


def action_path(action: ActionLike | None) -> str | None:
    """``module:qualname`` of an action (a string is kept as written)."""
    if action is None or isinstance(action, str):
        return action
    module = getattr(action, "__module__", None) or "?"
    name = getattr(action, "__qualname__", None) or getattr(action, "__name__", "?")
    return f"{module}:{name}"


def shown(action: ActionLike | None) -> str | None:
    """What documents and digests show of an action: the import path as written, or a
    function's qualified name (a module's name depends on how its file was loaded)."""
    if action is None or isinstance(action, str):
        return action
    return str(getattr(action, "__qualname__", None) or getattr(action, "__name__", "?"))


def well_formed(path: str) -> bool:
    """True for ``package.module:function`` (dots allowed on both sides)."""
    module, sep, name = path.partition(":")
    parts = [*module.split("."), *name.split(".")]
    return bool(sep) and all(p.isidentifier() for p in parts)


@dataclass(frozen=True, eq=False)
class OnError:
    """After the last attempt failed with one of ``errors`` (names or classes; none: any
    error), go to ``to``. The first matching route is taken, in the order written."""

    to: str
    errors: Sequence[str | type] = ()

    def __post_init__(self) -> None:
        names = [e if isinstance(e, str) else e.__name__ for e in self.errors]
        object.__setattr__(self, "errors", tuple(names))

    def matches(self, error_classes: Sequence[str]) -> bool:
        """Whether an error of these classes (the class and its bases) takes this route."""
        return not self.errors or any(e in error_classes for e in self.errors)

    def describe(self) -> str:
        """``PaymentDeclined -> payment_failed`` or ``any error -> manual``."""
        return f"{', '.join(str(e) for e in self.errors) or 'any error'} -> {self.to}"

    def to_json(self) -> Any:
        """``{"to", "errors"}``."""
        return {"to": self.to, "errors": list(self.errors)}


@dataclass(frozen=True, eq=False)
class Every:
    """Run ``action`` every ``interval`` while the run stays in the state, up to ``until``
    after entering it (strictly longer than the interval); the run does not move."""

    interval: bu.Budget
    action: ActionLike
    until: bu.Budget
    name: str = ""

    @property
    def path(self) -> str:
        """The action's import path."""
        found = action_path(self.action)
        assert found is not None
        return found

    def describe(self) -> str:
        """``every 7 real days until 28 real days: mod:fn``."""
        return f"every {self.interval} until {self.until}: {shown(self.action)}"

    def to_json(self) -> Any:
        """``{"name", "interval", "until", "action"}``."""
        return {
            "name": self.name,
            "interval": self.interval.to_json(),
            "until": self.until.to_json(),
            "action": shown(self.action),
        }


def every(interval: bu.Budget, *, action: ActionLike, until: bu.Budget, name: str = "") -> Every:
    """Recurring work while the run stays in the state (see :class:`Every`)."""
    return Every(interval, action, until, name)


def route_json(route: Any) -> Any:
    """An ``on_success`` route as JSON (same form as ``then``)."""
    return {"to": route.to, "when": exd.to_json(route.when) if route.when is not None else None}


#: ``result.<state>.<field>``: what an earlier automatic step returned.
result = ex.Ref("result")
