"""The bytes of attached files, content-addressed by sha256: a local directory or an
S3-compatible bucket.

Nothing is ever stored half. The directory writes a temporary name, fsyncs it and renames
it into place (a rename is atomic within one file system); S3 takes one ``PutObject``,
which stores the whole object or nothing. A backend that does not answer raises
:class:`~taskflow.core.files.files.StorageUnavailable`.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from taskflow.core.files import files as fi


class Storage(Protocol):
    """Where file bytes live, by sha256."""

    async def put(self, sha256: str, data: bytes) -> None:
        """Keep ``data`` under ``sha256`` (again is harmless: the same bytes)."""

    async def get(self, sha256: str) -> bytes | None:
        """The bytes kept under ``sha256``, or None."""

    async def delete(self, sha256: str) -> None:
        """Forget ``sha256`` (absent is fine)."""

    async def listed(self) -> list[tuple[str, datetime]]:
        """Every kept sha256 and when it was stored."""


def _down(error: Exception) -> fi.StorageUnavailable:
    return fi.StorageUnavailable(
        f"The file storage did not answer ({type(error).__name__}); nothing was stored. "
        "Send the file again in a minute."
    )


@dataclass(frozen=True)
class LocalStorage:
    """Files under ``root/ab/abcdef...`` (the first two hex digits fan the directory out)."""

    root: Path

    def _path(self, sha256: str) -> Path:
        return self.root / sha256[:2] / sha256

    def _put(self, sha256: str, data: bytes) -> None:
        target = self._path(sha256)
        target.parent.mkdir(parents=True, exist_ok=True)
        temporary = target.with_name(f".{sha256}.{secrets.token_hex(6)}.tmp")
        try:
            with open(temporary, "wb") as out:
                out.write(data)
                out.flush()
                os.fsync(out.fileno())
            os.replace(temporary, target)
        finally:
            with contextlib.suppress(FileNotFoundError):
                temporary.unlink()

    async def put(self, sha256: str, data: bytes) -> None:
        """Write, fsync and rename into place."""
        try:
            await asyncio.to_thread(self._put, sha256, data)
        except OSError as failed:
            raise _down(failed) from failed

    async def get(self, sha256: str) -> bytes | None:
        """The file's bytes, or None."""
        try:
            return await asyncio.to_thread(self._path(sha256).read_bytes)
        except FileNotFoundError:
            return None
        except OSError as failed:
            raise _down(failed) from failed

    async def delete(self, sha256: str) -> None:
        """Unlink the file."""
        with contextlib.suppress(FileNotFoundError):
            await asyncio.to_thread(self._path(sha256).unlink)

    def _listed(self) -> list[tuple[str, datetime]]:
        if not self.root.is_dir():
            return []
        return [
            (p.name, datetime.fromtimestamp(p.stat().st_mtime, UTC))
            for p in self.root.glob("??/*")
            if not p.name.startswith(".")
        ]

    async def listed(self) -> list[tuple[str, datetime]]:
        """The files under the root and their modification instants."""
        return await asyncio.to_thread(self._listed)


class S3Storage:
    """Objects ``prefix + sha256`` in an S3-compatible bucket (boto3, in a thread)."""

    def __init__(self, bucket: str, prefix: str = "", **client: Any) -> None:
        import boto3  # only deployments that store in S3 load it
        from botocore.config import Config

        self.bucket, self.prefix = bucket, prefix
        config = Config(connect_timeout=3, read_timeout=10, retries={"max_attempts": 2})
        self._client = boto3.client("s3", config=config, **client)

    def _call(self, name: str, **kwargs: Any) -> Any:
        found = getattr(self._client, name)(Bucket=self.bucket, **kwargs)
        if name == "get_object":
            return found["Body"].read()  # in the thread: the body is read from the network
        return found

    async def _run(self, name: str, **kwargs: Any) -> Any:
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            return await asyncio.to_thread(self._call, name, **kwargs)
        except ClientError as refused:
            if refused.response.get("Error", {}).get("Code") in ("NoSuchKey", "404"):
                return None
            raise _down(refused) from refused
        except BotoCoreError as failed:
            raise _down(failed) from failed

    async def put(self, sha256: str, data: bytes) -> None:
        """One PutObject: the whole object or nothing."""
        await self._run("put_object", Key=self.prefix + sha256, Body=data)

    async def get(self, sha256: str) -> bytes | None:
        """The object's bytes, or None."""
        found = await self._run("get_object", Key=self.prefix + sha256)
        return None if found is None else bytes(found)

    async def delete(self, sha256: str) -> None:
        """DeleteObject (absent is fine)."""
        await self._run("delete_object", Key=self.prefix + sha256)

    def _list_all(self) -> list[tuple[str, datetime]]:
        pages = self._client.get_paginator("list_objects_v2").paginate(
            Bucket=self.bucket, Prefix=self.prefix
        )
        return [
            (o["Key"][len(self.prefix) :], o["LastModified"])
            for page in pages
            for o in page.get("Contents", ())
        ]

    async def listed(self) -> list[tuple[str, datetime]]:
        """The objects under the prefix and their LastModified instants."""
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            return await asyncio.to_thread(self._list_all)
        except (BotoCoreError, ClientError) as failed:
            raise _down(failed) from failed
