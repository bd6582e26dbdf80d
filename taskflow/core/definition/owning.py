"""A workflow that owns its subjects: started by a new subject, its state shown on the subject.

``owns = Owns(field="status")`` on a workflow tracking ``ticket`` says: every new ticket
(``upsertSubject``) starts a run of it, without anyone calling ``startRun``; the run's state
is projected onto the ticket as the read-only attribute ``status``, which ``updateSubject``
refuses to write. At most one workflow (by its latest version) owns a subject type.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from taskflow.core.common import refusals
from taskflow.core.definition.checks.problems import Problem

if TYPE_CHECKING:
    from taskflow.core.definition.workflow import Definition

_FIELD: Final = re.compile(r"^[a-z][a-z0-9_]*$")


@dataclass(frozen=True)
class Owns:
    """The workflow owns the subjects it tracks: ``start`` a run on each new subject, and
    show the run's state as the subject's read-only attribute ``field``."""

    field: str = "status"
    start: bool = True

    def to_json(self) -> dict[str, Any]:
        """The declaration as the definition's document shows it."""
        return {"field": self.field, "start": self.start}


def problems(definition: Definition) -> list[Problem]:
    """What is wrong with ``definition``'s ``owns`` (a field that is not a plain name)."""
    owns = definition.owns
    if owns is None:
        return []
    if not isinstance(owns, Owns):
        return [
            Problem(
                "BAD_OWNS",
                definition.name,
                "owns",
                f"owns is {owns!r}, not an Owns(...)",
                'write owns = Owns(field="status")',
                definition.source,
            )
        ]
    if _FIELD.match(owns.field):
        return []
    return [
        Problem(
            "BAD_OWNS",
            definition.name,
            "owns",
            f"the owned field {owns.field!r} is not a plain attribute name",
            'use lower-case letters, digits and _ (e.g. owns = Owns(field="status"))',
            definition.source,
        )
    ]


def owners(latest: Iterable[Definition]) -> dict[str, list[Definition]]:
    """The workflows owning each subject type, among ``latest`` (one version per workflow)."""
    found: dict[str, list[Definition]] = {}
    for definition in latest:
        if definition.owns is not None:
            found.setdefault(definition.tracks, []).append(definition)
    return found


def cross_problems(latest: Iterable[Definition]) -> list[Problem]:
    """Two workflows owning one subject type (their latest versions): one must give it up."""
    found: list[Problem] = []
    for type_, owning in sorted(owners(latest).items()):
        if len(owning) > 1:
            names = ", ".join(sorted(d.name for d in owning))
            found.append(
                Problem(
                    "TWO_OWNERS",
                    owning[0].name,
                    "owns",
                    f"{len(owning)} workflows own subjects of type {type_!r}: {names}",
                    "keep owns on one of them; the others may still track the type (startRun)",
                    owning[0].source,
                )
            )
    return found


def projected(
    attributes: Mapping[str, Any], owns: Owns | None, state: str | None
) -> dict[str, Any]:
    """The subject's attributes as read: the owning run's state under the owned field."""
    shown = dict(attributes)
    if owns is not None:
        shown[owns.field] = state
    return shown


def check_writes(owner: Definition | None, attributes: Mapping[str, Any]) -> None:
    """Refuse (``OwnedField``) attributes that write the field ``owner`` owns."""
    if owner is None or owner.owns is None or owner.owns.field not in attributes:
        return
    name = owner.owns.field
    raise refusals.OwnedField(
        f"{name!r} shows the state of the {owner.name!r} run that owns this "
        f"{owner.tracks}; only that run moves it. Send the attributes without {name!r}.",
        field=name,
        workflow=owner.name,
    )
