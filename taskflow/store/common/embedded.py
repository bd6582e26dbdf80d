"""The embedded PostgreSQL: a real server started from the ``pgserver`` package.

pgserver shares one server per data dir between processes through a handle
file of pids, and stops it when the last handle exits. Two gaps are closed here
(STACK-NOTES.md): a process that dies without exit hooks (SIGKILL) leaves its
pid behind, so no later process ever stops the server. We therefore

* prune dead and zombie pids from the handle file (under pgserver's own lock)
  before attaching, so the next start adopts and later stops a leaked server;
* start a small watchdog process per owner that notices the owner's death
  (its stdin pipe closes however the owner dies) and stops the server when
  no live owner remains.

SIGTERM is turned into ``SystemExit`` by the CLI, so exit hooks run then too.

The server trusts every local connection to its unix socket (superuser, no
password), so the socket must never sit where other users can reach it. pgserver
puts it in the data dir, unless that path is too long for a unix socket (about
107 bytes); then it moves it to a world-writable folder under the temp dir.
Here instead a long data dir is reached through a short symlink in a private
folder (``$XDG_RUNTIME_DIR/taskflow`` or ``<tmp>/taskflow-<uid>``, mode 0700,
ours, checked), so the socket still lives in the 0700 data dir;
``unix_socket_permissions = 0700`` is set as well; a start whose socket ends up
anywhere else is stopped and refused. pgserver's warnings are logged, not hidden (but for
an unset ``XDG_RUNTIME_DIR``, which is normal outside a desktop session: at DEBUG).
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import stat
import subprocess
import sys
import tempfile
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import psutil

from taskflow import errors

log = logging.getLogger("taskflow.embedded")

#: The longest unix socket path (``sun_path`` is 108 bytes with its terminating NUL).
MAX_SOCKET_PATH = 107
SOCKET_NAME = ".s.PGSQL.5432"
#: The line taskflow keeps in the server's postgresql.conf.
SOCKET_PERMISSIONS = "unix_socket_permissions = 0700"

T = TypeVar("T")


#: How platformdirs (for pgserver's lock folder) says it fell back to ``<tmp>/runtime-<uid>``,
#: a folder it checks is private: the normal case outside a desktop session (cron, ssh,
#: containers), not a fault. Its other runtime-dir warnings (a folder of the wrong owner
#: or mode) are.
UNSET_RUNTIME_DIR = "XDG_RUNTIME_DIR is not set"


def _logging_warnings(action: Callable[[], T]) -> T:
    """Run ``action``, logging pgserver's warnings at WARNING; an unset XDG_RUNTIME_DIR at
    DEBUG (printed on every CLI call, it read as an error)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            return action()
        finally:
            for warning in caught:
                unset = str(warning.message).startswith(UNSET_RUNTIME_DIR)
                log.log(
                    logging.DEBUG if unset else logging.WARNING, "pgserver: %s", warning.message
                )


def _alive(pid: int) -> bool:
    try:
        return bool(psutil.Process(pid).status() != psutil.STATUS_ZOMBIE)
    except psutil.NoSuchProcess:
        return False


def _server_class() -> Any:
    def load() -> Any:
        from pgserver import postgres_server

        return postgres_server.PostgresServer

    return _logging_warnings(load)


def prune_dead_owners(pgdata: Path) -> list[int]:
    """Drop pids of dead processes from pgserver's handle file; return the live ones."""
    with _server_class()._lock:
        return prune_dead_owners_locked(pgdata)


def stop_if_unowned(pgdata: Path) -> bool:
    """Stop the server in ``pgdata`` when no live process owns it. True if stopped."""
    server_class = _server_class()  # imports pgserver, logging its warnings
    from pgserver import _commands
    from pgserver.utils import PostmasterInfo

    with server_class._lock:
        live = prune_dead_owners_locked(pgdata)
        if live:
            return False
        info = PostmasterInfo.read_from_pgdata(pgdata)
        if info is None or not info.is_running():
            return False
        user = "pgserver" if os.geteuid() == 0 else None
        _commands.pg_ctl(  # type: ignore[attr-defined]
            ["-w", "stop", "-m", "fast"], pgdata=pgdata, user=user
        )
        return True


def prune_dead_owners_locked(pgdata: Path) -> list[int]:
    """As :func:`prune_dead_owners`, for callers already holding pgserver's lock."""
    from pgserver.utils import DiskList

    handles = DiskList(pgdata / ".handle_pids.json")
    pids = handles.get()
    live = [pid for pid in pids if _alive(pid)]
    if live != pids:
        handles.put(live)
    return live


def _private_folder() -> Path:
    """A folder only this user may write: ``$XDG_RUNTIME_DIR/taskflow`` or ``<tmp>/taskflow-<uid>``.

    Created 0700; an existing one must be a real folder (not a symlink) of ours that
    nobody else may write, else starting is refused (someone may have planted it).
    """
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    base = Path(runtime) / "taskflow" if runtime else None
    if base is None or len(str(base)) > 40:
        base = Path(tempfile.gettempdir()) / f"taskflow-{os.geteuid()}"
    with contextlib.suppress(FileExistsError):
        base.mkdir(mode=0o700)
    info = os.lstat(base)
    if (
        not stat.S_ISDIR(info.st_mode)
        or info.st_uid != os.geteuid()
        or info.st_mode & (stat.S_IWGRP | stat.S_IWOTH)
    ):
        raise errors.ConfigError(
            f"{base} (where taskflow keeps a short path to the embedded database's socket) is "
            "not a private folder of this user: it must be a folder, owned by this user, that "
            f"nobody else may write. Remove it (rm -rf {base}) and start again, or set "
            "TASKFLOW_DATA_DIR to a shorter path."
        )
    return base


def socket_home(pgdata: Path) -> Path:
    """The path to hand pgserver: ``pgdata`` itself when its socket path fits, else a short
    symlink to it in a private folder (so the socket still lands in ``pgdata``)."""
    if len(str(pgdata / SOCKET_NAME).encode()) <= MAX_SOCKET_PATH:
        return pgdata
    digest = hashlib.sha256(str(pgdata).encode()).hexdigest()[:16]
    link = _private_folder() / digest
    if link.is_symlink() and Path(os.readlink(link)) == pgdata:
        return link
    if link.is_symlink() or link.exists():
        link.unlink()
    link.symlink_to(pgdata, target_is_directory=True)
    if len(str(link / SOCKET_NAME).encode()) > MAX_SOCKET_PATH:
        raise errors.ConfigError(
            f"No short private path for the embedded database's socket ({link}): set "
            "TASKFLOW_DATA_DIR to a shorter path."
        )
    return link


def _keep_socket_private(pgdata: Path) -> None:
    """Make sure postgresql.conf limits the socket to its owner (taken at the next start)."""
    conf = pgdata / "postgresql.conf"
    if not conf.exists():
        return
    text = conf.read_text()
    if SOCKET_PERMISSIONS not in text.splitlines():
        with conf.open("a") as out:
            out.write(
                f"\n# taskflow: only the server's user may use the socket\n{SOCKET_PERMISSIONS}\n"
            )


def _private_server_class() -> Any:
    base = _server_class()

    class PrivateServer(base):  # type: ignore[misc, valid-type]
        """pgserver's server with the socket kept to its owner."""

        def ensure_pgdata_inited(self) -> None:
            if self.system_user is not None:
                # As root the server runs as user "pgserver", which must reach the real
                # folder too (pgserver opens the prefix of the path it is given only).
                from pgserver.utils import ensure_prefix_permissions

                ensure_prefix_permissions(self.pgdata.resolve())
            super().ensure_pgdata_inited()
            _keep_socket_private(self.pgdata)

    return PrivateServer


class EmbeddedPostgres:
    """A handle on the embedded server; :meth:`url` gives its connection URL."""

    def __init__(self, data_dir: Path) -> None:
        real = data_dir.resolve() / "pg"
        real.parent.mkdir(parents=True, exist_ok=True)
        real.mkdir(exist_ok=True)
        self.pgdata = socket_home(real)
        prune_dead_owners(self.pgdata)
        self._server = _logging_warnings(self._attach)
        socket_dir = self._server.get_postmaster_info().socket_dir
        if socket_dir is None or Path(socket_dir) != self.pgdata:
            self._server.cleanup()
            raise errors.ConfigError(
                f"The embedded database's socket is in {socket_dir}, not in its data dir "
                f"{self.pgdata}: refusing to run with a socket other users may reach. Stop "
                f"that server (pg_ctl -D {real} stop) and start taskflow again."
            )
        self._watchdog = subprocess.Popen(
            [sys.executable, "-m", "taskflow.store.common.pg_watchdog", str(self.pgdata)],
            stdin=subprocess.PIPE,
            start_new_session=True,
        )

    def _attach(self) -> Any:
        # pgserver.get_server() without its resolve(): a symlinked short path stays short.
        server_class = _private_server_class()
        found = server_class._instances.get(self.pgdata)
        return found if found is not None else server_class(self.pgdata, cleanup_mode="stop")

    def url(self, database: str = "postgres") -> str:
        """A libpq URL of ``database`` on the embedded server (unix socket, trust auth)."""
        return str(self._server.get_uri(database))

    def stop(self) -> None:
        """Give up this process's handle; the last owner stops the server."""
        self._server.cleanup()
        if self._watchdog.stdin:
            self._watchdog.stdin.close()
        self._watchdog.wait(timeout=30)
