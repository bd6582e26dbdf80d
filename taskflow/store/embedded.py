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
"""

from __future__ import annotations

import os
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import psutil

# pgserver's platformdirs warns when XDG_RUNTIME_DIR is unset (servers, CI) and then
# falls back to /tmp, which is what we want: the warning is noise for operators.
warnings.filterwarnings("ignore", message="XDG_RUNTIME_DIR is not set")


def _alive(pid: int) -> bool:
    try:
        return bool(psutil.Process(pid).status() != psutil.STATUS_ZOMBIE)
    except psutil.NoSuchProcess:
        return False


def _server_class() -> Any:
    from pgserver import postgres_server

    return postgres_server.PostgresServer


def prune_dead_owners(pgdata: Path) -> list[int]:
    """Drop pids of dead processes from pgserver's handle file; return the live ones."""
    with _server_class()._lock:
        return prune_dead_owners_locked(pgdata)


def stop_if_unowned(pgdata: Path) -> bool:
    """Stop the server in ``pgdata`` when no live process owns it. True if stopped."""
    from pgserver import _commands
    from pgserver.utils import PostmasterInfo

    with _server_class()._lock:
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


class EmbeddedPostgres:
    """A handle on the embedded server; :meth:`url` gives its connection URL."""

    def __init__(self, data_dir: Path) -> None:
        import pgserver

        self.pgdata = data_dir.resolve() / "pg"
        self.pgdata.parent.mkdir(parents=True, exist_ok=True)
        if self.pgdata.exists():
            prune_dead_owners(self.pgdata)
        self._server = pgserver.get_server(  # type: ignore[attr-defined]
            self.pgdata, cleanup_mode="stop"
        )
        self._watchdog = subprocess.Popen(
            [sys.executable, "-m", "taskflow.store.pg_watchdog", str(self.pgdata)],
            stdin=subprocess.PIPE,
            start_new_session=True,
        )

    def url(self, database: str = "postgres") -> str:
        """A libpq URL of ``database`` on the embedded server (unix socket, trust auth)."""
        return str(self._server.get_uri(database))

    def stop(self) -> None:
        """Give up this process's handle; the last owner stops the server."""
        self._server.cleanup()
        if self._watchdog.stdin:
            self._watchdog.stdin.close()
        self._watchdog.wait(timeout=30)
