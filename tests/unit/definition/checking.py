"""Running ``taskflow check`` over one workflow file written for a test."""

from __future__ import annotations

from pathlib import Path

import pytest

from taskflow.cli import main


def check_refuses(
    folder: Path, capsys: pytest.CaptureFixture[str], source: str, *, file: str = "bad.py"
) -> str:
    """Write ``source`` as ``folder/file``, run ``taskflow check`` there, expect it to fail
    (exit status 1) and return what it wrote to stderr."""
    (folder / file).write_text(source)
    assert main(["check", str(folder)]) == 1
    return capsys.readouterr().err
