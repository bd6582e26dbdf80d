"""Which of many automations may act on an event, without asking most of them.

The worker evaluates every published automation of a workflow on every line its trigger
listens to: a hundred automations are a hundred decisions a line. Most skip, and many
skip on a condition ``<field> == <literal>`` (``subject.priority == "P1"``) that is one
of their conditions (all must hold). Such automations are filed under their field and
literal: for an event, the field's value is read once and only the automations filed
under that very value are asked; the others cannot match (``==`` holds only between
equal values, and equal JSON scalars hash alike). Automations without such a condition
are asked one by one (:func:`decide.skips`). An event deep enough to be a loop asks
every automation (a loop is flagged whatever its conditions say).
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable
from typing import Any, Generic, TypeVar

from taskflow.core.automations.decide import MAX_DEPTH, Event, env_of, skips
from taskflow.core.automations.document import Automation
from taskflow.core.definition.conditions import expr as ex

K = TypeVar("K")
#: (root, parts) of a reference: the filing key of the field (references compare as expressions).
_Path = tuple[str, tuple[str, ...]]


def _filing(rule: Automation) -> tuple[ex.Ref, Any] | None:
    """The first ``ref == literal`` among the rule's conditions, the literal a hashable
    JSON scalar; None when it has none."""
    for cond in rule.conditions:
        if not isinstance(cond, ex.Compare) or cond.op != "==":
            continue
        for ref, lit in ((cond.left, cond.right), (cond.right, cond.left)):
            if isinstance(ref, ex.Ref) and isinstance(lit, ex.Lit) and _scalar(lit.value):
                return ref, lit.value
    return None


def _scalar(value: Any) -> bool:
    if isinstance(value, float) and math.isnan(value):
        return False  # never equal, not even to itself
    return isinstance(value, str | int | float | bool)


class Screen(Generic[K]):
    """Automations (``key``, rule; None: a rule that no longer reads, never screened out)
    of one trigger, filed for :meth:`candidates`."""

    def __init__(self, automations: Iterable[tuple[K, Automation | None]]) -> None:
        self._every: list[tuple[K, Automation | None]] = list(automations)
        self._refs: dict[_Path, ex.Ref] = {}
        #: Positions in ``_every``, filed by field and literal; the unfiled ones.
        self._filed: dict[_Path, dict[Hashable, list[int]]] = {}
        self._rest: list[int] = []
        for i, (_, rule) in enumerate(self._every):
            filing = _filing(rule) if rule is not None else None
            if filing is None:
                self._rest.append(i)
                continue
            ref, value = filing
            path = (ref.root, ref.parts)
            self._refs.setdefault(path, ref)
            self._filed.setdefault(path, {}).setdefault(value, []).append(i)

    def candidates(self, event: Event) -> list[K]:
        """The automations that may act on ``event`` (or stop on it as a loop): every one
        but those that skip it whatever they remember; in the order they were given."""
        env = env_of(event)
        if event.depth >= MAX_DEPTH:
            asked = list(range(len(self._every)))
        else:
            asked = list(self._rest)
            for path, by_value in self._filed.items():
                value = ex.resolve(self._refs[path], env)
                if value is ex.MISSING or value is None or not _scalar(value):
                    continue
                asked.extend(by_value.get(value, ()))
        chosen = []
        for i in sorted(asked):
            key, rule = self._every[i]
            if rule is None or not skips(rule, event, env):
                chosen.append(key)
        return chosen
