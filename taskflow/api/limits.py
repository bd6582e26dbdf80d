"""Input limits at the edge: one place that says how big and what shape input may be.

Every request body, every GraphQL argument (and every string inside input objects and
JSON scalars such as a subject's attributes or a payload) passes through here before
it can reach a use case, so nothing over a cap and no NUL or unpaired surrogate ever
reaches SQL. The caps are settings (README.md, "GraphQL conventions and limits").
Refusal messages quote at most :data:`PREFIX_CHARS` characters of a value.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from taskflow import errors
from taskflow.config import config

#: How much of a refused value a message quotes.
PREFIX_CHARS = 24

#: Lone surrogates (JSON's "\\ud800" escapes decode to them) and NUL: PostgreSQL stores
#: neither in text, and neither is a character anyone means to send.
_FORBIDDEN = re.compile("[\x00\ud800-\udfff]")

#: Arguments and input fields stored in a sized column: their column's size
#: (taskflow/store/common/tables.py). Every other string gets ``Limits.max_text_chars``.
KEY_CAPS: dict[str, int] = {
    "externalId": 200,
    "idempotencyKey": 200,
    "correlationKey": 200,
    "to": 200,
    "login": 200,
    "holder": 200,
    "displayName": 200,
    "name": 200,
    "email": 320,
    "workflow": 100,
    "type": 100,
    "event": 100,
    "move": 100,
    "slotName": 100,
    "slot": 100,
    "state": 100,
    "role": 100,
    "group": 100,
    "roles": 100,
    "groups": 100,
    "audience": 300,
    "kinds": 60,
    "calendar": 100,
    "timeZone": 64,
    "search": 200,
    "token": 1000,
    "after": 1000,
    "before": 1000,
}
#: Global ids are short base64 strings; anything longer is not one taskflow gave out.
ID_CAP = 400


@functools.lru_cache(maxsize=1024)
def _camel(name: str) -> str:
    """``name`` in camelCase (argument and input field names: the schema's, so few)."""
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


@dataclass(frozen=True)
class Limits:
    """The caps on one request."""

    #: A request body, in bytes (HTTP 400 above it).
    max_body_bytes: int = 1024 * 1024
    #: JSON nesting of a request body (objects and arrays).
    max_json_depth: int = 64
    #: Characters of any string argument or string inside input and JSON values.
    max_text_chars: int = 10_000
    #: Bytes of one JSON document (a subject's attributes, a payload, a move's input).
    max_document_bytes: int = 256 * 1024
    #: The static cost of one GraphQL operation (taskflow/api/graphql/common/cost.py).
    max_query_cost: int = 50_000

    @classmethod
    def from_settings(cls, settings: config.Settings) -> Limits:
        """The limits a :class:`taskflow.config.config.Settings` asks for."""
        return cls(
            max_body_bytes=settings.max_body_bytes,
            max_text_chars=settings.max_text_chars,
            max_document_bytes=settings.max_document_bytes,
            max_query_cost=settings.max_query_cost,
        )

    def cap(self, name: str) -> int:
        """The character cap of an argument or input field called ``name``."""
        camel = _camel(name)
        if camel in KEY_CAPS:
            return KEY_CAPS[camel]
        return ID_CAP if camel == "id" or camel.endswith("Id") else self.max_text_chars


def prefix(value: str) -> str:
    """A short, printable quotation of ``value`` for a refusal message."""
    shown = value[:PREFIX_CHARS].encode("unicode_escape", "backslashreplace").decode("ascii")
    return repr(shown) + ("..." if len(value) > PREFIX_CHARS else "")


def refuse(field: str, problem: str) -> errors.ValidationError:
    """An INVALID_INPUT error naming ``field``."""
    return errors.ValidationError(f"{field} {problem}", field=field)


def check_text(value: str, field: str, cap: int) -> None:
    """Refuse NUL, unpaired surrogates and strings over ``cap`` characters."""
    if _FORBIDDEN.search(value):
        raise refuse(
            field,
            f"contains a NUL character or an unpaired UTF-16 surrogate (it begins "
            f"{prefix(value)}): send valid Unicode text without control character 0.",
        )
    if len(value) > cap:
        raise refuse(
            field,
            f"is {len(value)} characters long; at most {cap} are accepted (it begins "
            f"{prefix(value)}): shorten it.",
        )


def _document_size(value: Any) -> int:
    return _unset_fields_size(value) or len(
        json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str).encode()
    )


def _unset_fields_size(value: Any) -> int:
    """The JSON size of an empty document, or of an object whose values are all null and
    whose keys are plain names (an input object with no field given, as a mutation's input
    often is), without encoding it; 0 for any other document (then it is encoded)."""
    if not value:
        return 2
    if not isinstance(value, dict):
        return 0
    size = 1 + len(value)  # the braces, and a comma between each two members
    for key, item in value.items():
        if item is not None or not (isinstance(key, str) and key.isascii() and key.isidentifier()):
            return 0
        size += len(key) + 7  # "key":null
    return size


#: Input fields of the JSON scalar (their insides are the client's own keys and text).
JSON_FIELDS = frozenset({"attributes", "payload", "item", "input"})


def check_arguments(arguments: Mapping[str, Any], limits: Limits) -> None:
    """Walk every argument value; raise an INVALID_INPUT error for the first fault.

    Strings are checked against the cap of the nearest named field (inside a JSON
    value: ``max_text_chars``); JSON documents (objects and arrays) against
    ``max_document_bytes``, innermost first.
    """
    documents: list[tuple[int, str, Any]] = []
    # (path, field name, value, depth, inside a JSON value)
    stack: list[tuple[str, str, Any, int, bool]] = [
        (_camel(name), _camel(name), value, 0, False) for name, value in arguments.items()
    ]
    while stack:
        path, name, value, depth, free = stack.pop()
        if isinstance(value, str):
            check_text(value, path, limits.max_text_chars if free else limits.cap(name))
        elif isinstance(value, Mapping):
            documents.append((depth, path, value))
            # The top-level "input" argument is an input object; a nested one is JSON.
            inside = free or (name in JSON_FIELDS and (depth > 0 or name != "input"))
            for key, item in value.items():
                key_text = str(key)
                check_text(key_text, path, limits.max_text_chars)
                child = key_text if inside else _camel(key_text)
                stack.append((f"{path}.{child}", child, item, depth + 1, inside))
        elif isinstance(value, list | tuple):
            documents.append((depth, path, value))
            for index, item in enumerate(value):
                stack.append((f"{path}[{index}]", name, item, depth + 1, free))
        elif dataclasses.is_dataclass(value) and not isinstance(value, type):
            # A strawberry input object (when arguments arrive already converted).
            stack.append((path, name, vars(value), depth, free))
    for _, path, value in sorted(documents, key=lambda d: -d[0]):
        size = _document_size(value)
        if size > limits.max_document_bytes:
            raise refuse(
                path,
                f"is {size} bytes of JSON; at most {limits.max_document_bytes} are accepted: "
                "send less data (store large documents elsewhere and send a reference).",
            )
