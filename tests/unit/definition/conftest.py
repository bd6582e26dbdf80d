"""Fixtures for the definition tests."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from taskflow.cli import main

#: Writes a workflow file, runs ``taskflow check`` over it, expects a failure, returns stderr.
RefusedCheck = Callable[..., str]


@pytest.fixture
def refused_check(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> RefusedCheck:
    """``refused_check(source, file="bad.py")``: write ``source`` as ``tmp_path/file``, run
    ``taskflow check`` over the folder, expect it to fail (exit status 1) and return what it
    wrote to stderr."""

    def check(source: str, file: str = "bad.py") -> str:
        (tmp_path / file).write_text(source)
        assert main(["check", str(tmp_path)]) == 1
        return capsys.readouterr().err

    return check
