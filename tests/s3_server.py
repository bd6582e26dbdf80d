"""A real S3-compatible HTTP server for the file storage tests: moto's, on loopback, in a
thread of the test process."""

from __future__ import annotations

import contextlib
import socket
import urllib.request
from collections.abc import Iterator

import boto3
from moto.server import ThreadedMotoServer

BUCKET = "taskflow-files"
KEYS = {"aws_access_key_id": "test", "aws_secret_access_key": "test", "region_name": "us-east-1"}


def free_port() -> int:
    """A loopback port nothing listens on (right now)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextlib.contextmanager
def running() -> Iterator[str]:
    """The endpoint URL of a fresh server holding an empty :data:`BUCKET`."""
    port = free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port)
    server.start()
    endpoint = f"http://127.0.0.1:{port}"
    try:
        # moto keeps its buckets in the process, across servers: start from none.
        urllib.request.urlopen(urllib.request.Request(f"{endpoint}/moto-api/reset", method="POST"))
        boto3.client("s3", endpoint_url=endpoint, **KEYS).create_bucket(Bucket=BUCKET)
        yield endpoint
    finally:
        server.stop()
