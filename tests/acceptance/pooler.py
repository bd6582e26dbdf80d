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
import signal
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
    with own_pgbouncer(admin_url) as bouncer:
        yield bouncer.url


@contextlib.contextmanager
def own_pgbouncer(admin_url: str) -> Iterator[PgBouncer]:
    """A PgBouncer of this test's own (one it may kill and start again), stopped on leaving."""
    program = binary()
    if program is None:
        pytest.skip("pgbouncer is not installed (apt-get install pgbouncer; CI installs it)")
    bouncer = PgBouncer(program, admin_url)
    try:
        bouncer.start()
        yield bouncer
    finally:
        bouncer.stop()
        shutil.rmtree(bouncer.root, ignore_errors=True)


class PgBouncer:
    """One PgBouncer process on a port of its own, in front of ``admin_url``'s server."""

    def __init__(self, program: str, admin_url: str) -> None:
        host, port, user, password = _server(admin_url)
        self.root = Path(tempfile.mkdtemp(prefix="taskflow-pgbouncer-"))
        self.port = free_port()
        self.url = f"postgresql://{user}@127.0.0.1:{self.port}/postgres"
        server = f"host={host} port={port} user={user}" + (
            f" password={password}" if password else ""
        )
        (self.root / "pgbouncer.ini").write_text(
            f"[databases]\n* = {server}\n\n[pgbouncer]\n"
            f"listen_addr = 127.0.0.1\nlisten_port = {self.port}\nunix_socket_dir =\n"
            # Loopback only, a throwaway server: the clients need no password of their own.
            "auth_type = any\npool_mode = transaction\n"
            "max_client_conn = 500\ndefault_pool_size = 20\nserver_reset_query =\n"
            "ignore_startup_parameters = extra_float_digits\n"
            f"logfile = {self.root}/pgbouncer.log\npidfile = {self.root}/pgbouncer.pid\n"
        )
        self.argv = [program, str(self.root / "pgbouncer.ini")]
        if os.geteuid() == 0:
            # PgBouncer refuses to run as root: run it as the server's socket owner (who can
            # reach the socket), or postgres.
            owner = (
                Path(host).stat().st_uid if host.startswith("/") else pwd.getpwnam("postgres")[2]
            )
            shutil.chown(self.root, owner)
            self.argv = ["runuser", "-u", pwd.getpwuid(owner).pw_name, "--", *self.argv]
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        """Start it and wait until it listens."""
        process = subprocess.Popen(self.argv, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
        self.process = process
        wait_until(
            lambda: process.poll() is not None or _answers(self.port), 20, "pgbouncer to listen"
        )
        assert process.poll() is None, (self.root / "pgbouncer.log").read_text()

    def kill(self) -> None:
        """End it at once (SIGKILL: every client and server connection it held is cut)."""
        if self.process is not None and self.process.poll() is None:
            # runuser forwards no SIGKILL: end the pooler itself, by its pid file.
            pid = int((self.root / "pgbouncer.pid").read_text())
            os.kill(pid, signal.SIGKILL)
            self.process.wait(timeout=10)
        self.process = None
        (self.root / "pgbouncer.pid").unlink(missing_ok=True)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=10)
        self.process = None


def _answers(port: int) -> bool:
    import socket

    try:
        socket.create_connection(("127.0.0.1", port), 0.2).close()
    except OSError:
        return False
    return True
