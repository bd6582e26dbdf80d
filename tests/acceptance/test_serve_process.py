"""`taskflow serve` as an operator runs it: real processes, the embedded database."""

from __future__ import annotations

import signal

import pytest

from tests.acceptance.conftest import Deployment, postgres_processes, wait_until

pytestmark = pytest.mark.slow

ME = "{ me { id login roles } }"


def test_serve_answers_and_stops_cleanly_and_keeps_its_data(deployment: Deployment) -> None:
    loaded = deployment.run("principals", "load", "examples/principals.json")
    assert loaded.returncode == 0, loaded.stderr
    assert "20 principals created" in loaded.stdout
    minted = deployment.run("token", "ada", "--ttl", "1h")
    assert minted.returncode == 0, minted.stderr
    token = minted.stdout.strip()
    assert postgres_processes(deployment.data_dir) == [], (
        "CLI commands must not leave postgres running"
    )

    server = deployment.serve()
    response = deployment.graphql(ME, token)
    assert response.json()["data"]["me"] == {
        "id": "UHJpbmNpcGFsOmFkYQ",
        "login": "ada",
        "roles": ["admin", "lead"],
    }
    refused = deployment.graphql(ME, token[:-3] + "abc")
    assert refused.status_code == 401
    assert refused.json()["errors"][0]["extensions"]["code"] == "UNAUTHENTICATED"

    server.send_signal(signal.SIGTERM)
    assert server.wait(timeout=30) is not None
    wait_until(
        lambda: not postgres_processes(deployment.data_dir), 15, "postgres to stop after SIGTERM"
    )

    # Started again on the same data dir: the principals and the signing key are still there.
    server = deployment.serve()
    assert deployment.graphql(ME, token).json()["data"]["me"]["login"] == "ada"
    server.send_signal(signal.SIGINT)
    server.wait(timeout=30)
    wait_until(
        lambda: not postgres_processes(deployment.data_dir), 15, "postgres to stop after SIGINT"
    )


def test_a_killed_server_leaves_no_postgres_running(deployment: Deployment) -> None:
    server = deployment.serve()
    assert postgres_processes(deployment.data_dir)
    server.send_signal(signal.SIGKILL)
    server.wait(timeout=10)
    wait_until(
        lambda: not postgres_processes(deployment.data_dir), 20, "the watchdog to stop postgres"
    )
    # And the next start adopts the data dir normally.
    server = deployment.serve()
    assert deployment.graphql("{ __typename }", None).json()["data"] == {"__typename": "Query"}
    server.send_signal(signal.SIGTERM)
    server.wait(timeout=30)


def test_help_lists_every_command_with_one_line(deployment: Deployment) -> None:
    result = deployment.run("--help")
    assert result.returncode == 0
    for command in ("serve", "migrate", "token", "principals", "export-schema"):
        assert f"    {command}" in result.stdout


def test_token_for_an_unknown_principal_says_what_to_do(deployment: Deployment) -> None:
    result = deployment.run("token", "nobody")
    assert result.returncode == 1
    assert "principal 'nobody' does not exist: load it first" in result.stderr
