"""Attached files' settings (``TASKFLOW_FILES_*``, README "Configuration", docs/files.md)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from taskflow import errors


@dataclass(frozen=True)
class FileSettings:
    """Where attached files are kept and how long a download link works.

    ``directory`` (``TASKFLOW_FILES_DIR``, default ``<data dir>/files``) unless
    ``s3_bucket`` (``TASKFLOW_FILES_S3_BUCKET``) is set: then S3-compatible storage at
    ``s3_endpoint`` (``TASKFLOW_FILES_S3_ENDPOINT``; empty: AWS) with ``s3_region``,
    ``s3_prefix`` and the credentials ``TASKFLOW_FILES_S3_ACCESS_KEY`` /
    ``TASKFLOW_FILES_S3_SECRET_KEY`` (empty: boto3's usual chain).
    """

    directory: Path
    s3_bucket: str | None = None
    s3_endpoint: str | None = None
    s3_region: str | None = None
    s3_prefix: str = ""
    s3_access_key: str | None = field(default=None, repr=False)
    s3_secret_key: str | None = field(default=None, repr=False)
    #: Seconds a signed download URL works (``TASKFLOW_FILES_URL_TTL``).
    url_ttl: int = 300


def load(env: Mapping[str, str], data_dir: Path) -> FileSettings:
    """The settings from ``env``."""
    ttl_text = env.get("TASKFLOW_FILES_URL_TTL", "300")
    if not ttl_text.isdigit() or not 0 < int(ttl_text) <= 86_400:
        raise errors.ConfigError(
            f"TASKFLOW_FILES_URL_TTL={ttl_text!r}: write whole seconds from 1 to 86400, e.g. 300."
        )
    return FileSettings(
        directory=Path(env.get("TASKFLOW_FILES_DIR") or data_dir / "files").resolve(),
        s3_bucket=env.get("TASKFLOW_FILES_S3_BUCKET") or None,
        s3_endpoint=env.get("TASKFLOW_FILES_S3_ENDPOINT") or None,
        s3_region=env.get("TASKFLOW_FILES_S3_REGION") or None,
        s3_prefix=env.get("TASKFLOW_FILES_S3_PREFIX", ""),
        s3_access_key=env.get("TASKFLOW_FILES_S3_ACCESS_KEY") or None,
        s3_secret_key=env.get("TASKFLOW_FILES_S3_SECRET_KEY") or None,
        url_ttl=int(ttl_text),
    )
