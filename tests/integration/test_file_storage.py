"""The file storages against real backends: a directory, and an S3-compatible server (moto's,
on loopback in a thread); a backend that does not answer is UNAVAILABLE."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path

import boto3
import pytest

from taskflow.core.files import files as fi
from taskflow.store.files import storage
from tests import s3_server

pytestmark = pytest.mark.anyio

DATA = b"%PDF-1.7\n" + b"x" * 1000
DIGEST = hashlib.sha256(DATA).hexdigest()


@pytest.fixture
def s3_endpoint() -> Iterator[str]:
    """A real S3-compatible HTTP server on loopback with a bucket ``taskflow-files``."""
    with s3_server.running() as endpoint:
        yield endpoint


async def test_s3_keeps_gets_and_forgets_by_sha256(s3_endpoint: str) -> None:
    kept = storage.S3Storage("taskflow-files", "files/", endpoint_url=s3_endpoint, **s3_server.KEYS)
    await kept.put(DIGEST, DATA)
    assert await kept.get(DIGEST) == DATA
    listed = boto3.client("s3", endpoint_url=s3_endpoint, **s3_server.KEYS).list_objects_v2(
        Bucket="taskflow-files"
    )
    assert [o["Key"] for o in listed["Contents"]] == [f"files/{DIGEST}"]
    await kept.delete(DIGEST)
    assert await kept.get(DIGEST) is None


async def test_s3_that_does_not_answer_is_unavailable() -> None:
    down = storage.S3Storage(
        "taskflow-files", endpoint_url=f"http://127.0.0.1:{s3_server.free_port()}", **s3_server.KEYS
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
