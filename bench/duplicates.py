"""Duplicated code in ``taskflow/``: the whole tree, and like for like against a baseline.

    python bench/duplicates.py [--base edbe8b4^]

Runs the ``duplicates`` command (the team's tool library; not installed by the repository)
twice and prints its count line each time:

- over today's ``taskflow/`` as a whole;
- over today's versions of only the files ``taskflow/`` had at ``--base`` (those that still
  exist), so that code written since for new features does not count against code that was
  there: the same modules, then and now. The base's own count is printed beside it.

The default base is the commit before issue 17's work began, when the tree had 144 files
and ``duplicates`` counted the 61 pairs the issue names.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "taskflow"


def count_line(folder: Path) -> str:
    """The first line ``duplicates`` prints for ``folder`` (its pair count)."""
    done = subprocess.run(
        ["duplicates", "--repo", str(folder), "--most", "1", "--seconds", "200"],
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.splitlines()[0]


def lines_in(folder: Path) -> int:
    """Lines of Python under ``folder``."""
    return sum(len(p.read_text().splitlines()) for p in folder.rglob("*.py"))


def files_at(rev: str) -> list[str]:
    """The files git tracked under ``taskflow/`` at ``rev``, relative to it."""
    listed = subprocess.run(
        ["git", "-C", str(ROOT), "ls-tree", "-r", "--name-only", rev, PACKAGE + "/"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    return [name.removeprefix(PACKAGE + "/") for name in listed]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--base", default="edbe8b4^", help="the baseline commit")
    args = parser.parse_args()
    if shutil.which("duplicates") is None:
        raise SystemExit("The duplicates command is not on PATH (it comes with the tool library).")
    today = ROOT / PACKAGE
    print(f"today, whole tree ({lines_in(today)} lines of Python):", count_line(today))
    names = files_at(args.base)
    with tempfile.TemporaryDirectory() as scratch:
        then, now = Path(scratch, "then"), Path(scratch, "now")
        kept = 0
        for name in names:
            blob = subprocess.run(
                ["git", "-C", str(ROOT), "show", f"{args.base}:{PACKAGE}/{name}"],
                capture_output=True,
                check=True,
            ).stdout
            (then / name).parent.mkdir(parents=True, exist_ok=True)
            (then / name).write_bytes(blob)
            if (today / name).is_file():
                (now / name).parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(today / name, now / name)
                kept += 1
        print(f"at {args.base}, whole tree ({lines_in(then)} lines):", count_line(then))
        print(f"today, its {kept} files ({lines_in(now)} lines):", count_line(now))


if __name__ == "__main__":
    main()
