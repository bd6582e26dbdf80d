"""The embedded PostgreSQL's socket stays private however long the data dir's path is.

pgserver trusts every connection to the socket (superuser, no password); with a data
dir path too long for a unix socket it used to move the socket to a world-writable
folder under the temp dir, where any local user could connect.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path

import asyncpg
import pytest

from taskflow import errors
from taskflow.store.common import embedded


def _socket_dir(data_dir: Path) -> Path:
    # postmaster.pid, line 5: the folder the server made its socket in.
    lines = (data_dir / "pg" / "postmaster.pid").read_text().splitlines()
    return Path(lines[4])


@pytest.fixture
def outside_pytest_tmp() -> Iterator[Path]:
    # Not under pytest's tmp root: pytest keeps that 0700, and as root the server runs as
    # user "pgserver", who must reach the data dir (as in tests/conftest.py).
    folder = Path(tempfile.mkdtemp(prefix="taskflow-long-", dir="/tmp"))
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def test_a_long_data_dir_keeps_its_socket_in_the_data_dir(
    outside_pytest_tmp: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    data_dir = (
        outside_pytest_tmp / ("a-rather-long-folder-name-" * 3) / ("and-another-one-" * 3) / "data"
    )
    assert len(str(data_dir / "pg" / ".s.PGSQL.5432")) > 107
    server = embedded.EmbeddedPostgres(data_dir)
    try:
        socket_dir = _socket_dir(data_dir)
        # The socket is in the data dir itself (reached through a short private path).
        assert socket_dir.resolve() == (data_dir / "pg").resolve()
        assert (data_dir / "pg" / ".s.PGSQL.5432").is_socket()
        assert stat.S_IMODE((data_dir / "pg").stat().st_mode) == 0o700
        short_home = socket_dir.parent
        info = os.lstat(short_home)
        assert info.st_uid == os.geteuid()
        assert not info.st_mode & (stat.S_IWGRP | stat.S_IWOTH)

        async def settings() -> str:
            conn = await asyncpg.connect(server.url())
            try:
                return str(await conn.fetchval("SHOW unix_socket_permissions"))
            finally:
                await conn.close()

        assert asyncio.run(settings()) == "0700"
        socket = data_dir / "pg" / ".s.PGSQL.5432"
        assert not stat.S_IMODE(socket.stat().st_mode) & 0o077
    finally:
        server.stop()


@pytest.mark.skipif(os.geteuid() != 0, reason="planting another user's folder needs root")
def test_a_planted_socket_folder_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    planted = tmp_path / f"taskflow-{os.geteuid()}"
    planted.mkdir(mode=0o777)
    os.chown(planted, 65534, 65534)
    data_dir = tmp_path / ("long-" * 25) / "data"
    with pytest.raises(errors.ConfigError, match="not a private folder of this user") as refused:
        embedded.EmbeddedPostgres(data_dir)
    assert f"rm -rf {planted}" in refused.value.message
