"""What is wrong with a definition: every problem found, each naming where and the fix."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from taskflow import errors


@dataclass(frozen=True)
class Problem:
    """One mistake in a definition.

    ``code`` is stable (``UNKNOWN_STATE``...); ``workflow`` is empty for a
    source that failed to import; ``where`` is a path such as
    ``state submitted / slot review``; ``message`` says what is wrong and
    ``fix`` what to do.
    """

    code: str
    workflow: str
    where: str
    message: str
    fix: str
    source: str = ""

    def __str__(self) -> str:
        if not self.workflow:  # a source that did not even import (a class body's mistake)
            place = f"{self.where}: " if self.where else ""
            return f"{self.source}: {place}{self.message} [{self.code}]. Fix: {self.fix}"
        place = f"workflow {self.workflow!r}" + (f", {self.where}" if self.where else "")
        origin = f" ({self.source})" if self.source else ""
        return f"{place}{origin}: {self.message} [{self.code}]. Fix: {self.fix}"


class DefinitionError(errors.TaskflowError):
    """A workflow definition cannot be used; ``problems`` lists every mistake found."""

    code = "DEFINITION_INVALID"

    def __init__(self, problems: Sequence[Problem]) -> None:
        self.problems = tuple(problems)
        count = len(self.problems)
        head = f"{count} problem{'s' if count != 1 else ''} in workflow definitions:"
        super().__init__(
            "\n".join([head, *(f"  - {p}" for p in self.problems)]),
            problems=[
                {
                    "code": p.code,
                    "workflow": p.workflow,
                    "where": p.where,
                    "message": p.message,
                    "fix": p.fix,
                }
                for p in self.problems
            ],
        )

    @property
    def codes(self) -> tuple[str, ...]:
        """The codes of the problems, in order (handy in tests)."""
        return tuple(p.code for p in self.problems)


class DefinitionMistake(DefinitionError):
    """One mistake the DSL found as it ran (naming the workflow and state where known, and
    the fix). Each child is also the builtin error earlier versions raised there
    (``KeyError``, ``TypeError``, ``ValueError``), so code that caught those still does."""

    problem_code = "DEFINITION_MISTAKE"

    def __init__(self, message: str, *, fix: str, workflow: str = "", where: str = "") -> None:
        problem = Problem(self.problem_code, workflow, where, message, fix, source="")
        super().__init__([problem])
        if not workflow:  # raised while a class body runs: its name is not known yet
            self.message = f"{where + ': ' if where else ''}{message} [{self.problem_code}]."
            self.message += f" Fix: {fix}"
        else:
            self.message = str(problem)
        self.args = (self.message,)


def _mistake(name: str, code: str, builtin: type[Exception], doc: str) -> type[DefinitionMistake]:
    """A ``DefinitionMistake`` child with its problem code, also the ``builtin`` error."""
    attrs = {"problem_code": code, "__doc__": doc, "__module__": __name__, "__qualname__": name}
    return type(name, (DefinitionMistake, builtin), attrs)


UnknownState = _mistake(
    "UnknownState", "UNKNOWN_STATE", KeyError, "A state name the workflow does not declare."
)
UnknownSlot = _mistake("UnknownSlot", "UNKNOWN_SLOT", KeyError, "A slot its state lacks.")
UnknownMove = _mistake("UnknownMove", "UNKNOWN_MOVE", KeyError, "A move its state lacks.")
NotAnAudience = _mistake(
    "NotAnAudience", "NOT_AN_AUDIENCE", TypeError, "No ``who.*`` audience where one is needed."
)
ConditionMisused = _mistake(
    "ConditionMisused",
    "CONDITION_MISUSED",
    TypeError,
    "A condition used as a Python truth value, or a value no condition can hold.",
)
UnknownRoot = _mistake(
    "UnknownRoot", "UNKNOWN_ROOT", ValueError, "A reference root conditions do not know."
)
CalendarOnRealTime = _mistake(
    "CalendarOnRealTime",
    "CALENDAR_ON_REAL_TIME",
    ValueError,
    "A calendar given to a real-time budget (only business time runs on calendars).",
)
BadCalendarChain = _mistake(
    "BadCalendarChain",
    "BAD_CALENDAR_CHAIN",
    ValueError,
    "A milestone's calendar chain naming an unknown link, or one link twice.",
)
BadForecastAlert = _mistake(
    "BadForecastAlert",
    "BAD_FORECAST_ALERT",
    ValueError,
    "A milestone's forecast alert that is not a probability strictly between 0 and 1.",
)
