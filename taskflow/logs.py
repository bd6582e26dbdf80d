"""Logging, configured in one place for every process taskflow runs.

``TASKFLOW_LOG_FORMAT=json`` writes one JSON object per line (``ts``, ``level``,
``logger``, ``msg``, then the record's extra fields, e.g. an access line's
``request_id`` and ``status``); ``text`` (the default) writes readable lines with the
extra fields as ``key=value`` after the message. pgserver's start-up chatter is
logged at DEBUG (its warnings stay WARNING). Called by ``serve`` (and each of its
``--workers`` processes), ``worker``, ``demo`` and ``migrate``.

No line names a URL with its query or userinfo (a receiver's token, a database
password): :func:`install_redaction` makes every record, whatever logger wrote it,
carry its URLs redacted (``core/delivery/redact.py``) before any handler sees it, and the
formatters redact the extra fields. httpx's and httpcore's own lines (a request's
full URL at INFO, connection steps at DEBUG) are quieted to WARNING besides.
"""

from __future__ import annotations

import json
import logging
import os
import sys
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any, TextIO

import taskflow.core.delivery.redact as redact
from taskflow import errors

ENV = "TASKFLOW_LOG_FORMAT"
FORMATS = ("text", "json")

#: Attributes every ``LogRecord`` has: anything else on a record is an extra field.
_STANDARD = frozenset(
    vars(logging.LogRecord("x", logging.INFO, "x", 0, "x", None, None)).keys()
) | {"message", "asctime", "taskName", "color_message"}  # uvicorn's ANSI copy of msg

#: Loggers whose INFO lines are start-up chatter, demoted to DEBUG.
CHATTY = ("pgserver",)
#: The HTTP client's loggers: their INFO line names every request's full URL.
QUIET = ("httpx", "httpcore")


def extra_fields(record: logging.LogRecord) -> dict[str, Any]:
    """The fields given through ``extra=`` (in the order they were set), URLs redacted."""
    return {
        k: redact.redact_text(v) if isinstance(v, str) else v
        for k, v in vars(record).items()
        if k not in _STANDARD and not k.startswith("_")
    }


def redact_record(record: logging.LogRecord) -> None:
    """Take the secrets out of the URLs ``record``'s message and traceback name (in place)."""
    try:
        message = record.getMessage()
    except Exception:
        return  # a broken format: logging reports it itself when a handler formats it
    redacted = redact.redact_text(message)
    if redacted != message:
        record.msg, record.args = redacted, None
    if record.exc_info and not record.exc_text:
        # Formatters reuse ``exc_text`` when it is set (the standard one and ours).
        record.exc_text = redact.redact_text(logging.Formatter().formatException(record.exc_info))
    if record.stack_info:
        record.stack_info = redact.redact_text(record.stack_info)


class _Redacting:
    """A log record factory that redacts each record it makes (wraps the one it found)."""

    def __init__(self, inner: Callable[..., logging.LogRecord]) -> None:
        self.inner = inner

    def __call__(self, *args: Any, **kwargs: Any) -> logging.LogRecord:
        record = self.inner(*args, **kwargs)
        redact_record(record)
        return record


def install_redaction() -> None:
    """Redact every log record of this process from now on (once; idempotent)."""
    if not isinstance(logging.getLogRecordFactory(), _Redacting):
        logging.setLogRecordFactory(_Redacting(logging.getLogRecordFactory()))


def _timestamp(record: logging.LogRecord) -> str:
    moment = datetime.fromtimestamp(record.created, UTC)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


class JsonFormatter(logging.Formatter):
    """One JSON object per line: ``ts``, ``level``, ``logger``, ``msg``, extra fields,
    and ``exc`` (the traceback) when the record carries one."""

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "ts": _timestamp(record),
            "level": record.levelname,
            "logger": record.name,
            "msg": record.getMessage(),
        }
        for key, value in extra_fields(record).items():
            line.setdefault(key, value)
        if record.exc_text:
            line["exc"] = record.exc_text
        elif record.exc_info:
            line["exc"] = self.formatException(record.exc_info)
        return json.dumps(line, default=str, ensure_ascii=False)


class TextFormatter(logging.Formatter):
    """``ts LEVEL logger: msg key=value ...`` (a traceback on the following lines)."""

    def format(self, record: logging.LogRecord) -> str:
        fields = " ".join(f"{k}={_text(v)}" for k, v in extra_fields(record).items())
        line = f"{_timestamp(record)} {record.levelname} {record.name}: {record.getMessage()}"
        if fields:
            line = f"{line} {fields}"
        if record.exc_text:
            line = f"{line}\n{record.exc_text}"
        elif record.exc_info:
            line = f"{line}\n{self.formatException(record.exc_info)}"
        return line


def _text(value: Any) -> str:
    text = "-" if value is None else str(value)
    return json.dumps(text) if not text or any(c.isspace() or c == '"' for c in text) else text


class _Demote(logging.Filter):
    """Logs a chatty library's lines below WARNING at DEBUG (dropped unless DEBUG is on)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno >= logging.WARNING:
            return True
        record.levelno = logging.DEBUG
        record.levelname = "DEBUG"
        return logging.getLogger().isEnabledFor(logging.DEBUG)


def log_format(env: Mapping[str, str] | None = None) -> str:
    """``TASKFLOW_LOG_FORMAT`` read (``text`` unless set)."""
    value = ((os.environ if env is None else env).get(ENV) or "text").strip().lower()
    if value not in FORMATS:
        raise errors.ConfigError(
            f"{ENV}={value!r} is not a log format: write json (one JSON object per line) "
            "or text (readable lines, the default)."
        )
    return value


def formatter(kind: str) -> logging.Formatter:
    return JsonFormatter() if kind == "json" else TextFormatter()


def configure(
    level: int = logging.INFO, *, env: Mapping[str, str] | None = None, stream: TextIO | None = None
) -> None:
    """Send every log line to stderr in the configured format (replacing any handlers,
    uvicorn's included, so its lines share the format), URLs redacted."""
    install_redaction()
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.setFormatter(formatter(log_format(env)))
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level)
    for name in CHATTY:
        chatty = logging.getLogger(name)
        if not any(isinstance(f, _Demote) for f in chatty.filters):
            chatty.addFilter(_Demote())
    for name in QUIET:
        logging.getLogger(name).setLevel(logging.WARNING)


def uvicorn_config() -> dict[str, Any]:
    """uvicorn's ``log_config``: its loggers hand their lines to the root handler."""
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "loggers": {
            name: {"handlers": [], "propagate": True, "level": "INFO"}
            for name in ("uvicorn", "uvicorn.error", "uvicorn.access")
        },
    }
