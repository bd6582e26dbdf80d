"""``taskflow token``: a bounded time to live, and ``--revoke`` to sign someone out everywhere."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

import pytest

from taskflow import cli, errors
from taskflow.core.access import principals as core
from taskflow.service.access import tokens
from taskflow.store.access import principals as rows
from taskflow.store.common import db
from tests.conftest import TEST_SECRET


@pytest.fixture
def cli_env(database_url: str, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("TASKFLOW_DATABASE_URL", database_url)
    monkeypatch.setenv("TASKFLOW_SECRET_KEYS", TEST_SECRET)
    monkeypatch.delenv("TASKFLOW_TOKEN_MAX_TTL", raising=False)

    async def add() -> None:
        database = await db.Database.connect(database_url, min_size=1, max_size=1)
        try:
            async with database.transaction() as conn:
                principal = core.build({"id": "fiona", "display_name": "Fiona"})
                await rows.upsert(conn, principal, datetime.now(UTC), active=None)
        finally:
            await database.close()

    asyncio.run(add())
    return database_url


def fiona_as_stored(database_url: str) -> core.Principal:
    """Fiona's row as the commands left it (read on a connection of its own)."""

    async def read() -> core.Principal | None:
        database = await db.Database.connect(database_url, min_size=1, max_size=1)
        try:
            async with database.connection() as conn:
                return await rows.get(conn, "fiona")
        finally:
            await database.close()

    principal = asyncio.run(read())
    assert principal is not None
    return principal


def test_a_ttl_above_the_maximum_is_refused_in_one_line(
    cli_env: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    assert cli.main(["token", "fiona", "--ttl", "31d"]) == 2
    out = capsys.readouterr()
    assert out.out == ""
    assert out.err.count("\n") == 1
    assert "at most 30d (TASKFLOW_TOKEN_MAX_TTL)" in out.err
    monkeypatch.setenv("TASKFLOW_TOKEN_MAX_TTL", "8h")
    assert cli.main(["token", "fiona", "--ttl", "9h"]) == 2
    assert "at most 8h" in capsys.readouterr().err
    assert cli.main(["token", "fiona", "--ttl", "8h"]) == 0
    assert capsys.readouterr().out.strip()


def test_revoke_refuses_every_earlier_token(
    cli_env: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(["token", "fiona"]) == 0
    old = capsys.readouterr().out.strip()
    assert cli.main(["token", "fiona", "--revoke"]) == 0
    said = capsys.readouterr().out
    assert "every token of 'fiona' issued before" in said

    principal = fiona_as_stored(cli_env)
    assert principal.tokens_valid_after is not None
    _, issued = tokens.StaffTokens([TEST_SECRET]).verify_claims(old, datetime.now(UTC))
    assert issued is not None
    assert issued <= principal.tokens_valid_after


def test_the_maximum_setting_is_checked() -> None:
    from taskflow.config import config

    with pytest.raises(errors.ConfigError, match="TASKFLOW_TOKEN_MAX_TTL"):
        config.load(
            {
                "TASKFLOW_SECRET_KEYS": "k" * 40,
                "TASKFLOW_DATABASE_URL": "postgresql://x/",
                "TASKFLOW_TOKEN_MAX_TTL": "forever",
            }
        )
    loaded = config.load(
        {"TASKFLOW_SECRET_KEYS": "k" * 40, "TASKFLOW_DATABASE_URL": "postgresql://x/"}
    )
    assert loaded.token_max_ttl == timedelta(days=30)
