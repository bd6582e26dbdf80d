"""The file storages against real backends: a directory, and an S3-compatible server (moto's,
on loopback in a thread); a backend that does not answer is UNAVAILABLE."""

from __future__ import annotations

import hashlib
import socket
from collections.abc import Iterator
from pathlib import Path

import boto3
import pytest
from moto.server import ThreadedMotoServer

from taskflow.core.files import files as fi
from taskflow.store.files import storage

pytestmark = pytest.mark.anyio

DATA = b"%PDF-1.7\n" + b"x" * 1000
DIGEST = hashlib.sha256(DATA).hexdigest()
KEYS = {"aws_access_key_id": "test", "aws_secret_access_key": "test", "region_name": "us-east-1"}


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def s3_endpoint() -> Iterator[str]:
    """A real S3-compatible HTTP server on loopback with a bucket ``taskflow-files``."""
    port = _free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port)
    server.start()
    endpoint = f"http://127.0.0.1:{port}"
    try:
        boto3.client("s3", endpoint_url=endpoint, **KEYS).create_bucket(Bucket="taskflow-files")
        yield endpoint
    finally:
        server.stop()


async def test_s3_keeps_gets_and_forgets_by_sha256(s3_endpoint: str) -> None:
    kept = storage.S3Storage("taskflow-files", "files/", endpoint_url=s3_endpoint, **KEYS)
    await kept.put(DIGEST, DATA)
    assert await kept.get(DIGEST) == DATA
    listed = boto3.client("s3", endpoint_url=s3_endpoint, **KEYS).list_objects_v2(
        Bucket="taskflow-files"
    )
    assert [o["Key"] for o in listed["Contents"]] == [f"files/{DIGEST}"]
    await kept.delete(DIGEST)
    assert await kept.get(DIGEST) is None


async def test_s3_that_does_not_answer_is_unavailable() -> None:
    down = storage.S3Storage(
        "taskflow-files", endpoint_url=f"http://127.0.0.1:{_free_port()}", **KEYS
    )
    with pytest.raises(fi.StorageUnavailable) as refused:
        await down.put(DIGEST, DATA)
    assert refused.value.code == "UNAVAILABLE"


async def test_the_directory_never_holds_half_a_file(tmp_path: Path) -> None:
    kept = storage.LocalStorage(tmp_path)
    await kept.put(DIGEST, DATA)
    assert await kept.get(DIGEST) == DATA
    # Only the finished file is there: the temporary name was renamed into place.
    assert [sha for sha, _ in await kept.listed()] == [DIGEST]
    assert [p.name for p in (tmp_path / DIGEST[:2]).iterdir()] == [DIGEST]
    await kept.delete(DIGEST)
    assert await kept.get(DIGEST) is None
