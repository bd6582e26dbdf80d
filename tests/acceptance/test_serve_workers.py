"""``taskflow serve --workers 2``: two server processes on one port, one embedded database.

Each process that answers a GraphQL request writes its own metric files
(prometheus-client's multiprocess mode, named by pid) into the folder given in
``PROMETHEUS_MULTIPROC_DIR``: files of two child pids show both processes
served, and a scrape answered by either counts every request.
"""

from __future__ import annotations

import re
import shutil
import signal
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import psutil
from prometheus_client import parser

from tests.acceptance.conftest import Deployment, postgres_processes, wait_until

PING = "query Ping { __typename }"


def ping(base_url: str) -> int:
    # A fresh connection each time, so the kernel may hand it to either process.
    with httpx.Client(timeout=10) as http:
        response = http.post(f"{base_url}/graphql", json={"query": PING})
    return response.status_code


def served_by(folder: Path) -> set[int]:
    return {
        int(m.group(1)) for f in folder.iterdir() if (m := re.match(r"histogram_(\d+)\.db", f.name))
    }


def pings_counted(base_url: str) -> float:
    text = httpx.get(f"{base_url}/metrics", timeout=10).text
    for family in parser.text_string_to_metric_families(text):
        for sample in family.samples:
            if (
                sample.name == "taskflow_graphql_request_duration_seconds_count"
                and sample.labels == {"operation": "Ping", "outcome": "ok"}
            ):
                return sample.value
    return 0.0


def test_two_processes_serve_one_port_count_together_and_stop_cleanly(
    deployment: Deployment,
) -> None:
    folder = Path(tempfile.mkdtemp(prefix="taskflow-acceptance-metrics-", dir="/tmp"))
    (folder / "counter_999999.db").write_bytes(b"stale")  # from a previous run: removed
    deployment.env["PROMETHEUS_MULTIPROC_DIR"] = str(folder)
    try:
        server = deployment.serve("--workers", "2")
        parent = psutil.Process(server.pid)
        assert len(postgres_processes(deployment.data_dir)) >= 1
        assert not (folder / "counter_999999.db").exists()

        sent = 0
        deadline = time.monotonic() + 60
        with ThreadPoolExecutor(max_workers=8) as pool:
            while len(served_by(folder)) < 2 and time.monotonic() < deadline:
                codes = list(pool.map(ping, [deployment.base_url] * 16))
                assert codes == [200] * 16
                sent += 16
        servers = served_by(folder)
        children = {p.pid for p in parent.children(recursive=True)}
        assert len(servers) == 2, f"only {servers} answered {sent} requests"
        assert servers <= children

        # Whichever process answers the scrape, it counts both processes' requests.
        for _ in range(4):
            assert pings_counted(deployment.base_url) == sent

        server.send_signal(signal.SIGTERM)
        assert server.wait(timeout=60) is not None
        wait_until(
            lambda: not any(psutil.pid_exists(pid) for pid in servers),
            15,
            "the server processes to exit",
        )
        wait_until(
            lambda: not postgres_processes(deployment.data_dir),
            15,
            "postgres to stop after SIGTERM",
        )
        log = deployment.log.read_text()
        assert "with 2 processes" in log
        assert "Traceback" not in log, log
    finally:
        shutil.rmtree(folder, ignore_errors=True)
