"""Loading definitions from files, folders and modules into a catalog."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from taskflow import errors
from taskflow.core.definition import DefinitionError
from taskflow.service.versions import definitions
from tests.example_names import EXAMPLE_WORKFLOWS

GOOD = """
from taskflow import Route, Slot, State, Workflow, who

class Leave(Workflow):
    name = "leave"
    version = {version}
    tracks = "leave-request"
    calendar = "uk-london"

    asked = State(initial=True, slots=[Slot("approve", candidates=who.role("manager"))],
                  then=[Route("granted")])
    granted = State(terminal=True)
"""


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(textwrap.dedent(text))
    return path


def test_folder_collects_every_workflow_and_get_defaults_to_latest(tmp_path: Path) -> None:
    write(tmp_path, "leave_v1.py", GOOD.format(version=1))
    write(tmp_path, "leave_v2.py", GOOD.format(version=2))
    write(tmp_path, "_private.py", "raise RuntimeError('never imported')")
    catalog = definitions.load([str(tmp_path)], {"uk-london"})
    assert [d.key for d in catalog] == ["leave@1", "leave@2"]
    assert catalog.get("leave").version == 2
    assert catalog.get("leave", 1).version == 1
    assert "leave" in catalog
    assert len(catalog) == 2
    assert catalog.get("leave").source.endswith("leave_v2.py:Leave")


def test_unknown_workflow_or_version_is_not_found_naming_the_known(tmp_path: Path) -> None:
    catalog = definitions.load([str(write(tmp_path, "leave.py", GOOD.format(version=1)))])
    with pytest.raises(errors.NotFound, match=r"No workflow is called 'lave' \(known: leave\)"):
        catalog.get("lave")
    with pytest.raises(errors.NotFound, match=r"has no version 3 \(it has 1\)"):
        catalog.get("leave", 3)


def test_problems_from_every_source_are_reported_together(tmp_path: Path) -> None:
    write(tmp_path, "a.py", GOOD.format(version=1).replace('"granted")]', '"grantd")]'))
    write(tmp_path, "b.py", "def broken(:\n")
    write(tmp_path, "c.py", GOOD.format(version=1))
    with pytest.raises(DefinitionError) as caught:
        definitions.load([str(tmp_path), str(tmp_path / "missing.py"), "no_such_module_xyz"])
    codes = caught.value.codes
    assert codes.count("UNKNOWN_STATE") == 1
    assert "SOURCE_FAILED" in codes
    assert codes.count("SOURCE_NOT_FOUND") == 2
    text = caught.value.message
    assert "a.py:Leave" in text
    assert "b.py" in text
    assert "SyntaxError" in text


def test_the_same_name_and_version_twice_is_a_problem(tmp_path: Path) -> None:
    write(tmp_path, "one.py", GOOD.format(version=1))
    write(tmp_path, "two.py", GOOD.format(version=1))
    with pytest.raises(DefinitionError) as caught:
        definitions.load([str(tmp_path)])
    assert caught.value.codes == ("DUPLICATE_WORKFLOW",)
    assert "one.py:Leave" in caught.value.message


def test_a_file_named_twice_is_loaded_once(tmp_path: Path) -> None:
    path = write(tmp_path, "leave.py", GOOD.format(version=1))
    assert len(definitions.load([str(tmp_path), str(path)])) == 1


def test_digest_does_not_depend_on_where_the_file_was_loaded_from(tmp_path: Path) -> None:
    text = (
        GOOD.format(version=1)
        .replace("class Leave", "def hook(ctx):\n    return None\n\nclass Leave")
        .replace("asked = State(initial=True,", "asked = State(initial=True, on_enter=hook,")
    )
    (tmp_path / "one").mkdir()
    (tmp_path / "two").mkdir()
    first = definitions.load([str(write(tmp_path / "one", "leave.py", text))]).get("leave")
    second = definitions.load([str(write(tmp_path / "two", "leave.py", text))]).get("leave")
    assert first.to_document()["states"][0]["on_enter"] == "hook"
    assert first.digest == second.digest
    assert first.source != second.source


def test_unknown_calendar_is_checked_against_the_known_names(tmp_path: Path) -> None:
    path = write(tmp_path, "leave.py", GOOD.format(version=1))
    with pytest.raises(DefinitionError, match="calendar 'uk-london' is not defined"):
        definitions.load([str(path)], {"24x7"})


def test_module_source(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(tmp_path, "acme_leave_flows.py", GOOD.format(version=1))
    monkeypatch.syspath_prepend(str(tmp_path))
    catalog = definitions.load(["acme_leave_flows"])
    assert catalog.get("leave").source == "acme_leave_flows.Leave"


def test_settings_from_the_environment() -> None:
    assert definitions.sources_from_env({"TASKFLOW_WORKFLOWS": " a.b , ./x.py,"}) == (
        "a.b",
        "./x.py",
    )
    assert definitions.sources_from_env({})[0].endswith("examples")
    assert definitions.calendars_dir_from_env({}).name == "calendars"
    assert definitions.calendar_names(definitions.calendars_dir_from_env({})) >= {
        "24x7",
        "uk-london",
        "de-berlin",
    }
    catalog = definitions.load_from_env({})
    assert set(catalog.names()) == set(EXAMPLE_WORKFLOWS)
