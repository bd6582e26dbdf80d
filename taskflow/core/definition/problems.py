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
        if not self.workflow:  # a source that did not even import
            return f"{self.source}: {self.message} [{self.code}]. Fix: {self.fix}"
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


class UnknownState(DefinitionMistake, KeyError):
    """A state name the workflow does not declare."""

    problem_code = "UNKNOWN_STATE"


class UnknownSlot(DefinitionMistake, KeyError):
    """A slot name its state does not declare."""

    problem_code = "UNKNOWN_SLOT"


class UnknownMove(DefinitionMistake, KeyError):
    """A move name its state does not declare."""

    problem_code = "UNKNOWN_MOVE"


class NotAnAudience(DefinitionMistake, TypeError):
    """Something that is no ``who.*`` audience where one is needed."""

    problem_code = "NOT_AN_AUDIENCE"


class ConditionMisused(DefinitionMistake, TypeError):
    """A condition used as a Python truth value, or a value no condition can hold."""

    problem_code = "CONDITION_MISUSED"


class UnknownRoot(DefinitionMistake, ValueError):
    """A reference whose root is none of the roots conditions know (subject, payload...)."""

    problem_code = "UNKNOWN_ROOT"


class CalendarOnRealTime(DefinitionMistake, ValueError):
    """A calendar given to a real-time budget (only business time runs on calendars)."""

    problem_code = "CALENDAR_ON_REAL_TIME"
