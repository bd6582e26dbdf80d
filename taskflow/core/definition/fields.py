"""Payload fields of a slot's event, and checking a deposited payload against them.

The same fields drive the magic-link form, so values may arrive as form text
("12.50", "on") as well as JSON; :func:`validate_payload` returns JSON-ready,
typed values (dates as ISO text).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any, ClassVar, Final, Protocol
from urllib.parse import urlparse

from taskflow import errors
from taskflow.core.files import files as fi

#: Field types a slot may declare.
FIELD_TYPES: Final = ("text", "number", "integer", "boolean", "date", "choice", "file", "url")

_TRUE: Final = frozenset({"true", "yes", "on", "1"})
_FALSE: Final = frozenset({"false", "no", "off", "0"})


class _Make(Protocol):
    """``Field.text(name, required=..., label=...)`` and the other one-type constructors."""

    def __call__(self, name: str, *, required: bool = True, label: str | None = None) -> Field: ...


def _kind(type: str, doc: str) -> _Make:
    def make(name: str, *, required: bool = True, label: str | None = None) -> Field:
        return Field(name, type, required, label=label)

    make.__name__, make.__doc__ = type, doc
    return make


@dataclass(frozen=True)
class Field:
    """One payload field: ``name``, ``type`` (one of :data:`FIELD_TYPES`), ``required``..."""

    name: str
    type: str = "text"
    required: bool = True
    choices: tuple[str, ...] = ()
    label: str | None = None
    help: str | None = None
    #: ``file`` fields: the types the bytes may show (empty: any), the cap on one file's
    #: size and on how many files the field takes.
    content_types: tuple[str, ...] = ()
    max_bytes: int = fi.DEFAULT_MAX_BYTES
    max_files: int = fi.DEFAULT_MAX_FILES

    text: ClassVar[_Make] = _kind("text", "Free text.")
    number: ClassVar[_Make] = _kind("number", "A number, integral or not.")
    integer: ClassVar[_Make] = _kind("integer", "A whole number.")
    boolean: ClassVar[_Make] = _kind("boolean", 'Yes or no (a form checkbox sends "on").')
    date: ClassVar[_Make] = _kind("date", "A calendar date, ``YYYY-MM-DD``.")
    file: ClassVar[_Make] = _kind(
        "file", "A reference to an uploaded file (an id or a URL the application understands)."
    )
    url: ClassVar[_Make] = _kind("url", "An http(s) URL.")

    @classmethod
    def choice(
        cls, name: str, choices: Iterable[str], *, required: bool = True, label: str | None = None
    ) -> Field:
        """One of ``choices``."""
        return cls(name, "choice", required, tuple(choices), label=label)

    @classmethod
    def upload(
        cls,
        name: str,
        content_types: Iterable[str] = (),
        *,
        max_bytes: int = fi.DEFAULT_MAX_BYTES,
        max_files: int = fi.DEFAULT_MAX_FILES,
        required: bool = True,
        label: str | None = None,
    ) -> Field:
        """Uploaded files (``FILE``): of ``content_types`` by their bytes, each at most
        ``max_bytes``, at most ``max_files`` of them."""
        return cls(
            name,
            "file",
            required,
            label=label,
            content_types=tuple(content_types),
            max_bytes=max_bytes,
            max_files=max_files,
        )

    @property
    def takes_uploads(self) -> bool:
        """A ``file`` field that names its types (``Field.upload``) asks for the document
        itself: only files uploaded here, never a reference typed as text."""
        return self.type == "file" and bool(self.content_types)

    def to_json(self) -> Any:
        """``{"name", "type", "required", "choices", "label", "help"}`` (and a file
        field's ``contentTypes``, ``maxBytes``, ``maxFiles``)."""
        shown = {
            "name": self.name,
            "type": self.type,
            "required": self.required,
            "choices": list(self.choices),
            "label": self.label,
            "help": self.help,
        }
        if self.type == "file":
            shown |= {
                "contentTypes": list(self.content_types),
                "maxBytes": self.max_bytes,
                "maxFiles": self.max_files,
            }
        return shown


@dataclass(frozen=True)
class FieldProblem:
    """Why one field of a payload was refused."""

    field: str
    reason: str

    def __str__(self) -> str:
        return f"{self.field}: {self.reason}"


class PayloadError(errors.ValidationError):
    """A payload does not fit its slot's fields; ``problems`` names each field and why."""

    code = "PAYLOAD_INVALID"

    def __init__(self, problems: Sequence[FieldProblem]) -> None:
        self.problems = tuple(problems)
        super().__init__(
            "The payload was refused: " + "; ".join(str(p) for p in self.problems) + ".",
            problems=[{"field": p.field, "reason": p.reason} for p in self.problems],
        )


#: Why a text reference (or someone else's file) is refused by a field that takes uploads.
UPLOAD_FIRST: Final = (
    "takes only files uploaded by you: upload the file first (POST /files, or the form's "
    "file input) and send the reference it answers, not a name or a link"
)


class _Refused(Exception):
    pass


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _clean(field: Field, value: Any) -> Any:
    kind = field.type
    text = value.strip() if isinstance(value, str) else None
    if kind == "file" and not isinstance(value, str):
        return _uploaded(field, value)
    if field.takes_uploads:
        raise _Refused(UPLOAD_FIRST)
    if kind in ("text", "file"):
        if not isinstance(value, str):
            raise _Refused(f"expected text, got {type(value).__name__}")
        if kind == "file":
            return _file_reference(value)
        return value
    if kind == "boolean":
        if isinstance(value, bool):
            return value
        if text is not None and text.lower() in _TRUE | _FALSE:
            return text.lower() in _TRUE
        raise _Refused(f"expected yes or no (true/false), got {value!r}")
    if kind in ("number", "integer"):
        number: Any = value
        if text is not None:
            try:
                number = int(text) if kind == "integer" else float(text)
            except ValueError:
                wanted = "a whole number" if kind == "integer" else "a number"
                raise _Refused(f"expected {wanted}, got {value!r}") from None
        if not _number(number):
            raise _Refused(f"expected a number, got {value!r}")
        if kind == "integer":
            if isinstance(number, float) and not number.is_integer():
                raise _Refused(f"expected a whole number, got {value!r}")
            return int(number)
        return number
    if kind == "date":
        try:
            return date.fromisoformat(str(text if text is not None else value)).isoformat()
        except ValueError:
            raise _Refused(f"expected a date written YYYY-MM-DD, got {value!r}") from None
    if kind == "choice":
        if value not in field.choices:
            raise _Refused(f"expected one of {', '.join(field.choices)}, got {value!r}")
        return value
    if kind == "url":
        return _http_url(text or "", value)
    raise _Refused(f"the field has unknown type {kind!r}")


#: A URL scheme as browsers read one: letters first, after any leading spaces or controls
#: (which they drop, as they drop tabs and newlines inside it: "java\tscript:").
_SCHEME = re.compile(r"^([a-z][a-z0-9+.\-]*):", re.IGNORECASE)
_IGNORED_BY_BROWSERS = re.compile(r"[\x00-\x20\x7f]")


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _http_url(text: str, value: object) -> str:
    # The scheme as Python reads it and as a browser would (controls and spaces dropped)
    # must both be http(s); spaces elsewhere ("certificate of incorporation.pdf") are fine.
    parsed = urlparse(text)
    seen = _SCHEME.match(_IGNORED_BY_BROWSERS.sub("", text))
    if (
        parsed.scheme.lower() not in ("http", "https")
        or seen is None
        or seen.group(1).lower() not in ("http", "https")
        or not parsed.netloc
    ):
        raise _Refused(f"expected an http(s) URL, got {_short(value)}")
    return text


def _file_reference(value: str) -> str:
    """An http(s) URL or a plain reference (an id or path); any other scheme is refused.

    Staff pages and mailers may render the value as a link, so ``javascript:``,
    ``data:``, ``file:`` and scheme-relative ``//host`` references never get in.
    """
    text = value.strip()
    if not text:
        raise _Refused("expected a file reference, got empty text")
    squeezed = _IGNORED_BY_BROWSERS.sub("", text)
    scheme = _SCHEME.match(squeezed)
    if scheme is not None and scheme.group(1).lower() in ("http", "https"):
        return _http_url(text, value)
    if scheme is not None or squeezed.startswith(("//", "\\\\", "/\\", "\\/")):
        raise _Refused(
            "expected an http(s) URL or a plain file reference (an id or a path such as "
            f"invoices/2026-11.pdf); other kinds of link are refused, got {_short(value)}"
        )
    return text


def _uploaded(field: Field, value: Any) -> Any:
    """Uploaded files' references (one, or a list of at most ``max_files``), each within
    the field's caps as sniffed at upload."""
    many = value if isinstance(value, list) else [value]
    if len(many) > field.max_files:
        raise _Refused(f"takes at most {field.max_files} file(s), got {len(many)}")
    kept = []
    for item in many:
        ref = fi.parse_ref(item)
        if ref is None:
            raise _Refused(
                "expected a file reference {name, type, size, sha256} as POST /files answers"
            )
        if field.content_types and ref.type not in field.content_types:
            raise _Refused(f"takes {', '.join(field.content_types)}, got {ref.type}")
        if ref.size > field.max_bytes:
            raise _Refused(f"takes files of at most {field.max_bytes} bytes, got {ref.size}")
        kept.append(ref.to_json())
    return kept if isinstance(value, list) else kept[0]


def validate_payload(fields: Sequence[Field], payload: Mapping[str, Any] | None) -> dict[str, Any]:
    """The cleaned payload, or :class:`PayloadError` naming every field that is wrong and why.

    Missing optional fields are left out; empty form text counts as missing;
    fields the slot does not declare are refused (a typo would otherwise be lost).
    """
    payload = payload or {}
    cleaned: dict[str, Any] = {}
    problems: list[FieldProblem] = []
    declared = {f.name for f in fields}
    for name in payload:
        if name not in declared:
            allowed = ", ".join(sorted(declared)) or "no fields"
            problems.append(FieldProblem(name, f"not a field of this slot (it takes {allowed})"))
    for field in fields:
        value = payload.get(field.name)
        if value is None or (isinstance(value, str) and not value.strip()):
            if field.required:
                problems.append(FieldProblem(field.name, "is required"))
            continue
        try:
            cleaned[field.name] = _clean(field, value)
        except _Refused as refused:
            problems.append(FieldProblem(field.name, str(refused)))
    if problems:
        raise PayloadError(problems)
    return cleaned
