"""Stops the embedded PostgreSQL once its owner process is gone, however it died.

Run by :class:`taskflow.store.common.embedded.EmbeddedPostgres` as
``python -m taskflow.store.common.pg_watchdog PGDATA`` with a pipe on stdin. The pipe
reaches end-of-file when the owner exits for any reason, SIGKILL included; then
the server is stopped unless another live process still holds it.
"""

from __future__ import annotations

import signal
import sys
from pathlib import Path

from taskflow.store.common import embedded


def main() -> int:
    # The owner's Ctrl-C or SIGTERM must not kill the watchdog before it can clean up.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    pgdata = Path(sys.argv[1])
    sys.stdin.buffer.read()  # blocks until the owner's end of the pipe closes
    embedded.stop_if_unowned(pgdata)
    return 0


if __name__ == "__main__":
    sys.exit(main())
