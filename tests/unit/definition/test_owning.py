"""A workflow owning its subjects: load-time checks and the projected field."""

from __future__ import annotations

from pathlib import Path

import pytest

from taskflow.core.common import refusals
from taskflow.core.definition import DefinitionError, owning
from taskflow.service.versions import definitions
from tests.unit.definition.test_loader import write

OWNER = """
from taskflow import Owns, Route, Slot, State, Workflow, who

class {cls}(Workflow):
    name = "{name}"
    version = {version}
    tracks = "ticket"
    {owns}

    new = State(initial=True, slots=[Slot("triage", candidates=who.role("support"))],
                then=[Route("done")])
    done = State(terminal=True)
"""


def _owner(folder: Path, name: str, owns: str, version: int = 1) -> None:
    cls = name.title().replace("-", "") + str(version)
    text = OWNER.format(cls=cls, name=name, version=version, owns=owns)
    write(folder, f"{name}_{version}.py", text)


def test_one_owner_per_subject_type_is_found_by_the_catalog(tmp_path: Path) -> None:
    _owner(tmp_path, "desk", 'owns = Owns(field="stage")')
    _owner(tmp_path, "audit", "")  # tracks tickets too, owns nothing
    catalog = definitions.load([str(tmp_path)])
    owner = catalog.owners["ticket"]
    assert owner.name == "desk"
    assert owner.owns == owning.Owns(field="stage")


def test_two_owners_of_one_subject_type_are_refused_at_load(tmp_path: Path) -> None:
    _owner(tmp_path, "desk", "owns = Owns()")
    _owner(tmp_path, "audit", "owns = Owns()")
    with pytest.raises(DefinitionError) as caught:
        definitions.load([str(tmp_path)])
    assert caught.value.codes == ("TWO_OWNERS",)
    assert "audit, desk" in caught.value.message


def test_only_the_latest_version_owns(tmp_path: Path) -> None:
    _owner(tmp_path, "desk", "owns = Owns()", version=1)
    _owner(tmp_path, "desk", "", version=2)  # version 2 gave it up
    _owner(tmp_path, "audit", "owns = Owns()")
    assert definitions.load([str(tmp_path)]).owners["ticket"].name == "audit"


@pytest.mark.parametrize("owns", ['owns = Owns(field="Status!")', 'owns = "ticket"'])
def test_a_bad_owns_is_refused_at_load(tmp_path: Path, owns: str) -> None:
    _owner(tmp_path, "desk", owns)
    with pytest.raises(DefinitionError) as caught:
        definitions.load([str(tmp_path)])
    assert caught.value.codes == ("BAD_OWNS",)


def test_writing_the_owned_field_is_refused_naming_it_and_its_workflow(tmp_path: Path) -> None:
    _owner(tmp_path, "desk", "owns = Owns()")
    owner = definitions.load([str(tmp_path)]).owners["ticket"]
    owning.check_writes(owner, {"title": "x"})  # other fields are the application's
    with pytest.raises(refusals.OwnedField) as caught:
        owning.check_writes(owner, {"title": "x", "status": "done"})
    assert (caught.value.field, caught.value.workflow) == ("status", "desk")
    assert owning.projected({"title": "x"}, owner.owns, "new") == {"title": "x", "status": "new"}
