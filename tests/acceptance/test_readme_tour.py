"""README.md's tour, run exactly as written: `taskflow serve`, then the tour in a second shell.

The commands are read from README.md itself, so a command added to the tour is run too.
Only what must differ on a test machine is rewritten: ``.venv/bin/taskflow`` becomes this
interpreter's ``-m taskflow``, ``localhost:8000`` the test's port, and the data dir and port
come from the environment (``TASKFLOW_DATA_DIR``, ``TASKFLOW_PORT``). The server is started
as README says, with its in-process timer worker on (the default on the embedded database),
and the tour runs against it while it works: the order a newcomer follows.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import subprocess
import sys
from pathlib import Path

from taskflow.config import config
from tests.acceptance.conftest import Deployment, spawn

README = config.PROJECT_ROOT / "README.md"
INSTALL_AND_SERVE = (
    "python3 -m venv .venv && .venv/bin/pip install -e '.[dev]' && .venv/bin/taskflow serve"
)
TEST_COMMAND = ".venv/bin/pytest"
TOUR_HEADING = "## A five-minute tour"
#: Every step the tour must hold, by a fragment of its command.
STEPS = (
    "taskflow demo",
    "taskflow principals load",
    "TOKEN=$(",
    "/graphql",
    "/health",
    "webhooks listen",
)
#: The whole tour's time limit (the demo plays a hundred runs; a minute is usual).
TOUR_TIMEOUT = 600


def sh_blocks(markdown: str) -> list[str]:
    """The text of every fenced ``sh`` block, in order."""
    return re.findall(r"^```sh\n(.*?)^```", markdown, flags=re.MULTILINE | re.DOTALL)


def commands(block: str) -> list[str]:
    """A block's commands: continuation lines joined, comments and blank lines dropped."""
    found: list[str] = []
    pending = ""
    for line in block.splitlines():
        if not pending and (not line.strip() or line.lstrip().startswith("#")):
            continue
        if line.endswith("\\"):
            pending += line[:-1]
            continue
        found.append((pending + line).strip())
        pending = ""
    assert not pending, f"README.md: a command ends in a continuation backslash: {pending!r}"
    return found


def tour_block(markdown: str) -> str:
    _, heading, rest = markdown.partition(TOUR_HEADING + "\n")
    assert heading, f"README.md has no {TOUR_HEADING!r} section"
    section = rest.split("\n## ", 1)[0]
    blocks = sh_blocks(section)
    assert blocks, f"README.md's {TOUR_HEADING!r} section has no ```sh block"
    return blocks[0]


def serve_command(markdown: str) -> str:
    """The ``taskflow serve`` part of README's install-and-serve command."""
    first = commands(sh_blocks(markdown)[0])[0]
    parts = [part.strip() for part in first.split("&&") if "taskflow serve" in part]
    assert len(parts) == 1, f"cannot extract the `taskflow serve` part of {first!r}"
    return parts[0]


def rewrite(command: str, port: int) -> str:
    """What must differ on a test machine, and nothing else."""
    taskflow = f"{shlex.quote(sys.executable)} -m taskflow"
    rewritten = command.replace(".venv/bin/taskflow", taskflow)
    rewritten = rewritten.replace("localhost:8000", f"localhost:{port}")
    rest = command.replace(".venv/bin/taskflow", "").replace("localhost:8000", "")
    leftover = re.search(r"\.venv/\S+|localhost:\d+", rest)
    assert leftover is None, (
        f"cannot rewrite README's tour command {command!r} for a test machine "
        f"(no rule for {leftover.group(0)!r})"
    )
    return rewritten


def script(tour: list[str], port: int, out: Path) -> str:
    """One bash session: each command in turn, its output and exit status kept apart."""
    lines = [f"cd {shlex.quote(str(config.PROJECT_ROOT))}"]
    for number, command in enumerate(tour):
        stem = shlex.quote(str(out / str(number)))
        lines.append("{\n" + rewrite(command, port) + f"\n}} >{stem}.out 2>{stem}.err")
        lines.append(f"echo $? >{stem}.rc")
    return "\n".join(lines) + "\n"


def test_readme_starts_with_install_and_serve_then_the_test_command() -> None:
    blocks = sh_blocks(README.read_text())
    assert [commands(block) for block in blocks[:2]] == [[INSTALL_AND_SERVE], [TEST_COMMAND]]


def tour_commands(markdown: str) -> list[str]:
    """The tour's commands, each step it promises found and each command rewritable."""
    tour = commands(tour_block(markdown))
    for step in STEPS:
        assert any(step in command for command in tour), (
            f"README's tour has no command with {step!r}: cannot extract that step"
        )
    for command in tour:
        rewrite(command, 8123)
    return tour


def test_the_tour_names_every_step_it_promises() -> None:
    assert len(tour_commands(README.read_text())) >= len(STEPS)


def start_serve(deployment: Deployment, command: str) -> subprocess.Popen[str]:
    """README's ``taskflow serve``, rewritten, waited for until /health answers."""
    argv = shlex.split(rewrite(command, deployment.port))
    return deployment.healthy(spawn(argv, deployment.env, deployment.log, "a"), command)


def run_tour(tour: list[str], deployment: Deployment) -> Path:
    """Run the tour in one bash; the folder of each command's .out, .err and .rc."""
    out = deployment.log.parent / "tour"
    out.mkdir()
    session = subprocess.Popen(
        ["bash", "--noprofile", "--norc", "-s"],
        stdin=subprocess.PIPE,
        env=deployment.env,
        cwd=config.PROJECT_ROOT,
        text=True,
        start_new_session=True,
    )
    try:
        session.communicate(script(tour, deployment.port, out), timeout=TOUR_TIMEOUT)
    except subprocess.TimeoutExpired:
        os.killpg(session.pid, signal.SIGKILL)
        session.wait()
    return out


def test_the_readme_tour_against_a_running_server(deployment: Deployment) -> None:
    markdown = README.read_text()
    tour = tour_commands(markdown)
    # The webhook part twice, as a reader repeating the tour would: each pass starts a ticket
    # of its own, so the second listen gets events too (a fixed reference was RunExists).
    again = tour[next(i for i, c in enumerate(tour) if c.startswith("REF=")) :]
    server = start_serve(deployment, serve_command(markdown))
    try:
        out = run_tour(tour + again, deployment)
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=30)

    failures: list[str] = []
    answers: dict[str, str] = {}
    listened: list[str] = []
    for number, command in enumerate(tour + again):
        rc = out / f"{number}.rc"
        stdout = (out / f"{number}.out").read_text() if rc.exists() else ""
        stderr = (out / f"{number}.err").read_text() if rc.exists() else ""
        answers.setdefault(command, stdout)
        if "webhooks listen" in command:
            listened.append(stdout)
        if not rc.exists():
            failures.append(f"{command}\n  did not finish within {TOUR_TIMEOUT}s")
        elif rc.read_text().strip() != "0":
            failures.append(
                f"{command}\n  exited {rc.read_text().strip()}\n"
                f"  stdout: {stdout[-1500:]}\n  stderr: {stderr[-3000:]}"
            )

    def answer(fragment: str) -> str:
        return next(text for command, text in answers.items() if fragment in command)

    demo = answer("taskflow demo")
    if demo and "inbox(" not in demo:
        failures.append("taskflow demo printed no ready-to-paste inbox query")
    try:
        data = json.loads(answer("/graphql"))["data"]
        assert data["me"]["login"] == "fiona", data["me"]
        labels = [edge["node"]["label"] for edge in data["inbox"]["edges"]]
        assert labels, "Fiona's inbox is empty"
        assert all(isinstance(label, str) and label for label in labels), labels
    except (ValueError, KeyError, TypeError, AssertionError) as exc:
        failures.append(f"me/inbox answer: {exc!r}: {answer('/graphql')[:1500]!r}")
    try:
        assert json.loads(answer("/health"))["database"] == "reachable"
    except (ValueError, KeyError, TypeError, AssertionError) as exc:
        failures.append(f"/health answer: {exc!r}: {answer('/health')[:500]!r}")

    for events in listened:
        if not all(f in events for f in ("run.started", "slot.opened", "T-TOUR-", "verified")):
            failures.append(f"the webhook receiver did not print the ticket's events: {events!r}")
    tickets = [set(re.findall(r"T-TOUR-\d+", events)) for events in listened]
    if len(tickets) != 2 or tickets[0] == tickets[1]:
        failures.append(f"the two passes did not start a ticket each: {tickets}")

    assert not failures, (
        "README's tour failed against a running `taskflow serve`:\n\n"
        + "\n\n".join(failures)
        + f"\n\nserve's log (end):\n{deployment.log.read_text()[-3000:]}"
    )
