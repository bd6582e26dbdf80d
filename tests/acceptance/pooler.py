"""PgBouncer in transaction mode in front of the tests' PostgreSQL, for process tests.

``.ci/with-pgbouncer`` runs one for a whole pass (``TASKFLOW_TEST_POOLER_URL``); a test
that needs one anyway starts its own here, in front of the session's server (the embedded
one's unix socket, or ``TASKFLOW_TEST_DATABASE_URL``), when Debian's ``pgbouncer`` is
installed, and skips saying so when it is not.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import subprocess
import tempfile
import urllib.parse
from collections.abc import Iterator
from pathlib import Path

import pytest

from taskflow.store.common import db
from tests import conftest
from tests.acceptance.conftest import free_port, wait_until

BINARY_PLACES = ("/usr/sbin/pgbouncer", "/usr/bin/pgbouncer")


def binary() -> str | None:
    """The pgbouncer program, or None when it is not installed."""
    found = shutil.which("pgbouncer")
    return found or next((p for p in BINARY_PLACES if os.access(p, os.X_OK)), None)


def through(pooler_admin_url: str, database_url: str) -> str:
    """``database_url``'s database reached through the pooler at ``pooler_admin_url``."""
    name = database_url.partition("?")[0].rsplit("/", 1)[1]
    return db.with_database(pooler_admin_url, name)


def _server(admin_url: str) -> tuple[str, int, str, str]:
    """(host or socket folder, port, user, password) of the server at ``admin_url``."""
    parts = urllib.parse.urlsplit(admin_url)
    query = urllib.parse.parse_qs(parts.query)
    host = parts.hostname or query.get("host", ["/tmp"])[0]
    user = urllib.parse.unquote(parts.username or query.get("user", ["postgres"])[0])
    return host, parts.port or 5432, user, urllib.parse.unquote(parts.password or "")


@contextlib.contextmanager
def pgbouncer(admin_url: str) -> Iterator[str]:
    """An admin URL through PgBouncer in transaction mode in front of ``admin_url``'s server:
    the CI pass's own when it runs one, else one started here and stopped on leaving."""
    if conftest.POOLER_URL is not None:
        yield conftest.POOLER_URL
        return
    program = binary()
    if program is None:
        pytest.skip("pgbouncer is not installed (apt-get install pgbouncer; CI installs it)")
    host, port, user, password = _server(admin_url)
    root = Path(tempfile.mkdtemp(prefix="taskflow-pgbouncer-"))
    listen = free_port()
    server = f"host={host} port={port} user={user}" + (f" password={password}" if password else "")
    (root / "pgbouncer.ini").write_text(
        f"[databases]\n* = {server}\n\n[pgbouncer]\n"
        f"listen_addr = 127.0.0.1\nlisten_port = {listen}\nunix_socket_dir =\n"
        # Loopback only, a throwaway server: the clients need no password of their own.
        "auth_type = any\npool_mode = transaction\n"
        "max_client_conn = 500\ndefault_pool_size = 20\nserver_reset_query =\n"
        "ignore_startup_parameters = extra_float_digits\n"
        f"logfile = {root}/pgbouncer.log\npidfile = {root}/pgbouncer.pid\n"
    )
    argv = [program, str(root / "pgbouncer.ini")]
    if os.geteuid() == 0:
        # PgBouncer refuses to run as root: run it as the server's socket owner (who can
        # reach the socket), or postgres.
        owner = Path(host).stat().st_uid if host.startswith("/") else pwd.getpwnam("postgres")[2]
        shutil.chown(root, owner)
        argv = ["runuser", "-u", pwd.getpwuid(owner).pw_name, "--", *argv]
    process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    try:
        wait_until(
            lambda: process.poll() is not None or _answers(listen), 20, "pgbouncer to listen"
        )
        assert process.poll() is None, (root / "pgbouncer.log").read_text()
        yield f"postgresql://{user}@127.0.0.1:{listen}/postgres"
    finally:
        process.terminate()
        process.wait(timeout=10)
        shutil.rmtree(root, ignore_errors=True)


def _answers(port: int) -> bool:
    import socket

    try:
        socket.create_connection(("127.0.0.1", port), 0.2).close()
    except OSError:
        return False
    return True
