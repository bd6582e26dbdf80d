"""No token in the server log (issue 15.8), whatever a client sends.

A real ``taskflow serve`` gets every operation of graphql/operations/ with real staff
tokens and a real magic-link token (as a variable and written inline), plus failing
calls: anonymous, tampered tokens, syntax errors around a token, bad cursors, link
pages. Then the whole log is searched for every token: none may be there, and an
expected refusal is one line, never a traceback.
"""

from __future__ import annotations

import json
import signal
import subprocess
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest

from taskflow.config import config
from taskflow.service.delivery import webhooks
from tests.acceptance import test_webhook_workers as workers
from tests.acceptance.conftest import TASKFLOW, Deployment, wait_until, worker_env
from tests.api import magic as m
from tests.api import operation_inputs as ops
from tests.webhook_receiver import Receiver

pytestmark = [pytest.mark.slow, pytest.mark.anyio]

PEOPLE = ("ada", "app", "fiona", "leah", "olga", "sam", "sid")


async def post(http: httpx.AsyncClient, query: str, variables: Any, token: str | None) -> Any:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    response = await http.post(
        "/graphql", json={"query": query, "variables": variables}, headers=headers
    )
    assert response.status_code < 500, response.text
    return response.json()


async def test_the_server_log_holds_no_token(deployment: Deployment) -> None:
    loaded = deployment.run("principals", "load", "examples/principals.json")
    assert loaded.returncode == 0, loaded.stderr
    people = {}
    for person in PEOPLE:
        minted = deployment.run("token", person, "--ttl", "1h")
        assert minted.returncode == 0, minted.stderr
        people[person] = minted.stdout.strip()
    server = deployment.serve()
    try:
        async with httpx.AsyncClient(base_url=deployment.base_url, timeout=30) as http:
            objects = await ops.prepare(http, people)
            second = (await m.minted(http, people, objects.vendor_slot_id))["token"]
            secrets = [*people.values(), objects.link_token, second]
            for name in ops.names():
                token = people[ops.RUNNER.get(name, "fiona")]
                body = await post(http, ops.text(name), ops.variables(name, objects), token)
                assert "INTERNAL" not in json.dumps(body), (name, body)
            link = objects.link_token
            inline = (
                'mutation { completeWithLink(input: {token: "TOKEN", payload: {document: 1}}) '
                "{ __typename ... on Refusal { code } } }"
            )
            await post(http, inline.replace("TOKEN", second), {}, None)
            await post(http, inline.replace("TOKEN", link), {}, None)
            await post(http, '{ me(token: "TOKEN") { login } }'.replace("TOKEN", link), {}, None)
            broken = 'mutation { completeWithLink(input: {token: "TOKEN"'.replace("TOKEN", link)
            await post(http, broken, {}, None)
            await post(http, "{ me { login } }", {}, None)
            await post(http, "{ me { login } }", {}, people["fiona"][:-4] + "AAAA")
            await post(http, "{ me { login } }", {}, link)
            await post(
                http,
                "query($a: String) { inbox(first: 5, after: $a) { totalCount } }",
                {"a": link},
                people["fiona"],
            )
            await post(
                http,
                "mutation($t: String!) { completeWithLink(input: {token: $t, payload: 5}) "
                "{ __typename } }",
                {"t": link + "x"},
                None,
            )
            for token in (link, second, link[:-3] + "abc"):
                await http.get(f"/l/{token}")
                await http.head(f"/l/{token}")
                await http.post(f"/l/{token}", data={"document": "x"})
            await http.get("/reports/sla", headers={"Authorization": f"Bearer {people['leah']}"})
            await http.get(f"/reports/sla?token={people['leah']}")
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=30)

    log = deployment.log.read_text()
    assert "graphql request" in log  # refusals are logged, in one line each
    for secret in secrets:
        assert secret not in log
        # Nor any long piece of one (a signature, a payload part).
        for piece in secret.split("."):
            if len(piece) >= 16:
                assert piece not in log, piece
    assert "Traceback" not in log
    assert "UNAUTHENTICATED" in log


def test_a_real_server_answers_hostile_bodies_with_graphql_shaped_400s(
    deployment: Deployment,
) -> None:
    server = deployment.serve()
    url = f"{deployment.base_url}/graphql"
    json_type = {"content-type": "application/json"}

    def chunks() -> Any:
        # No Content-Length: the cap is counted as the body streams in.
        for _ in range(40):
            yield b" " * 65536
        yield b'{"query": "{ me { login } }"}'

    try:
        bodies: list[tuple[Any, dict[str, str]]] = [
            (b"5", json_type),
            (b'"x"', json_type),
            (b"null", json_type),
            (b'{"query": "\xff\xfe"}', json_type),
            (b'{"query": "{ me { login } }", "v": ' + b"[" * 1000 + b"]" * 1000 + b"}", json_type),
            (b'{"query": "' + b"x" * 2_000_000 + b'"}', json_type),
            (b'{"query": "{ me { login } }", "variables": {"n": NaN}}', json_type),
            (b"{ me { login } }", {"content-type": "text/plain"}),
            (chunks(), json_type),
        ]
        for body, headers in bodies:
            response = httpx.post(url, content=body, headers=headers, timeout=30)
            assert response.status_code == 400, response.text[:200]
            assert response.json()["errors"][0]["extensions"]["code"] == "BAD_REQUEST"
        assert httpx.get(f"{deployment.base_url}/health", timeout=5).status_code == 200
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=30)
    assert "Traceback" not in deployment.log.read_text()


def test_a_real_worker_logs_no_webhook_url_token(database_url: str, tmp_path: Path) -> None:
    """A worker delivers to an endpoint whose URL carries a token (failing, retried,
    redirected, then delivered): its whole stderr holds the host, never the token."""
    token = "hook-" + uuid.uuid4().hex
    secret = webhooks.new_secret()
    receiver = Receiver(secrets=[secret]).start()
    receiver.answer(500)
    url = f"http://127.0.0.1:{receiver.port}/hooks?token={token}"
    workers.endpoint(database_url, url, secret)
    events = 5
    workers.sql(database_url, workers.SEED, events, datetime.now(UTC))
    env = worker_env(
        database_url,
        tmp_path,
        TASKFLOW_WEBHOOK_ALLOW_PRIVATE="true",
        TASKFLOW_WEBHOOK_BACKOFF_BASE="0.2",
        TASKFLOW_WEBHOOK_BACKOFF_MAX="0.5",
    )
    log = tmp_path / "worker.log"
    with log.open("w") as out:
        worker = subprocess.Popen(
            [*TASKFLOW, "worker"], env=env, cwd=config.PROJECT_ROOT, stdout=out, stderr=out
        )
    try:
        wait_until(lambda: len(receiver.received) >= 2, 30, "failed attempts")
        receiver.answer(204)
        wait_until(lambda: workers.delivered(database_url) == events, 60, "every delivery")
    finally:
        worker.send_signal(signal.SIGTERM)
        worker.wait(timeout=30)
        receiver.stop()
    written = log.read_text()
    assert "worker started" in written
    assert token not in written
    errors = workers.sql(database_url, "SELECT last_error FROM webhook_delivery")
    assert not [e for e in errors if e[0] and token in e[0]]
