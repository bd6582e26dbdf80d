"""A file attached to a slot: its reference, what its bytes are, and the field's caps.

Pure. The type of a file is read from its first bytes (``filetype``'s signatures), never
from its name or the type its sender declared: a ``.pdf`` that is a ZIP is a ZIP. What
the bytes cannot be told from (plain text) has no sniffed type and is refused unless the
field allows ``application/octet-stream``.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

import filetype

from taskflow import errors

#: The default cap on one file's size, and on the files one field takes.
DEFAULT_MAX_BYTES: Final = 10 * 1024 * 1024
DEFAULT_MAX_FILES: Final = 1
#: The type of bytes nothing recognises.
UNKNOWN: Final = "application/octet-stream"
#: How many leading bytes the sniffing reads (filetype reads at most 8 KiB).
SNIFF_BYTES: Final = 8192
_SHA256 = re.compile(r"^[0-9a-f]{64}$")
#: A file name as kept: no directories, no controls, at most 200 characters.
_NAME_DROPPED = re.compile(r"[\x00-\x1f\x7f/\\]")


class FileRefused(errors.ValidationError):
    """A file was refused (too large, not an allowed type, too many); nothing was stored."""

    code = "FILE_REFUSED"


class StorageUnavailable(errors.TaskflowError):
    """The storage backend did not answer; nothing was stored and no slot was completed.
    Retryable: send the same file again later."""

    code = "UNAVAILABLE"


@dataclass(frozen=True)
class FileRef:
    """What a payload keeps of a file: its name, sniffed type, size and sha256."""

    name: str
    type: str
    size: int
    sha256: str

    def to_json(self) -> dict[str, Any]:
        """``{"name", "type", "size", "sha256"}``: the value a payload carries."""
        return {"name": self.name, "type": self.type, "size": self.size, "sha256": self.sha256}


def sniff(head: bytes) -> str:
    """The MIME type the bytes themselves show, or :data:`UNKNOWN`."""
    kind = filetype.guess(head[:SNIFF_BYTES])
    return str(kind.mime) if kind is not None else UNKNOWN


def clean_name(name: str | None) -> str:
    """A sender's file name fit to keep and show (directories and controls dropped)."""
    kept = _NAME_DROPPED.sub("", (name or "").rsplit("/", 1)[-1].rsplit("\\", 1)[-1]).strip()
    return kept[:200] or "file"


def accept(
    name: str | None,
    data: bytes,
    *,
    content_types: tuple[str, ...],
    max_bytes: int,
) -> FileRef:
    """The reference of ``data`` if it fits the caps, else :class:`FileRefused` saying why."""
    if len(data) > max_bytes:
        raise FileRefused(
            f"The file {clean_name(name)!r} has {len(data)} bytes, over the cap of {max_bytes}: "
            "send a smaller file.",
            size=len(data),
            max_bytes=max_bytes,
        )
    if not data:
        raise FileRefused(f"The file {clean_name(name)!r} is empty: send the document itself.")
    found = sniff(data)
    if content_types and found not in content_types:
        shown = "unrecognised bytes" if found == UNKNOWN else found
        raise FileRefused(
            f"The file {clean_name(name)!r} is {shown}, judged by its content (not its name); "
            f"this field takes {', '.join(content_types)}.",
            sniffed=found,
            allowed=list(content_types),
        )
    return FileRef(clean_name(name), found, len(data), hashlib.sha256(data).hexdigest())


def parse_ref(value: Any) -> FileRef | None:
    """A payload value read back as a reference; None when it is not one."""
    if not isinstance(value, Mapping):
        return None
    name, kind, size, digest = (value.get(k) for k in ("name", "type", "size", "sha256"))
    if not (isinstance(name, str) and isinstance(kind, str) and isinstance(digest, str)):
        return None
    if not isinstance(size, int) or isinstance(size, bool) or size < 0:
        return None
    if _SHA256.match(digest) is None:
        return None
    return FileRef(clean_name(name), kind, size, digest)


def refs_in(payload: Mapping[str, Any] | None) -> list[FileRef]:
    """Every file reference a payload carries (one per field, or a list per field)."""
    found: list[FileRef] = []
    for value in (payload or {}).values():
        for item in value if isinstance(value, list) else [value]:
            ref = parse_ref(item)
            if ref is not None:
                found.append(ref)
    return found
