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
