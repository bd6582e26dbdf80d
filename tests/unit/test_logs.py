"""The log format: JSON lines (``TASKFLOW_LOG_FORMAT=json``) or readable text lines."""

from __future__ import annotations

import io
import json
import logging
import sys
from collections.abc import Iterator

import pytest

from taskflow import errors, logs


@pytest.fixture
def restore_root() -> Iterator[None]:
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    yield
    for handler in list(root.handlers):
        root.removeHandler(handler)
    for handler in handlers:
        root.addHandler(handler)
    root.setLevel(level)


def _emit(kind: str) -> list[str]:
    stream = io.StringIO()
    logs.configure(env={logs.ENV: kind}, stream=stream)
    log = logging.getLogger("taskflow.test")
    log.info("GET %s %d", "/graphql", 200, extra={"request_id": "r-1", "status": 200})
    log.warning("plain line")
    try:
        raise ValueError("boom")
    except ValueError:
        log.exception("it failed", extra={"principal": "fiona"})
    return stream.getvalue().splitlines()


def test_every_json_line_is_one_object_with_the_fields_and_extras(restore_root: None) -> None:
    lines = [json.loads(line) for line in _emit("json")]
    assert len(lines) == 3
    for line in lines:
        assert {"ts", "level", "logger", "msg"} <= line.keys()
        assert line["logger"] == "taskflow.test"
        assert line["ts"].endswith("Z")
    first, second, third = lines
    assert first["msg"] == "GET /graphql 200"
    assert first["level"] == "INFO"
    assert first["request_id"] == "r-1"
    assert first["status"] == 200
    assert second == {k: second[k] for k in ("ts", "level", "logger", "msg")}
    assert second["level"] == "WARNING"
    assert third["principal"] == "fiona"
    assert "ValueError: boom" in third["exc"]


def test_text_lines_are_readable_with_the_extras_as_key_values(restore_root: None) -> None:
    lines = _emit("text")
    assert lines[0].endswith("INFO taskflow.test: GET /graphql 200 request_id=r-1 status=200")
    assert lines[1].endswith("WARNING taskflow.test: plain line")
    assert "ERROR taskflow.test: it failed principal=fiona" in lines[2]
    assert any("ValueError: boom" in line for line in lines[3:])


def test_text_is_the_default_and_a_wrong_format_says_what_to_write() -> None:
    assert logs.log_format({}) == "text"
    assert logs.log_format({logs.ENV: "JSON"}) == "json"
    with pytest.raises(errors.ConfigError, match="write json"):
        logs.log_format({logs.ENV: "yaml"})


def test_pgserver_chatter_is_debug_and_its_warnings_stay(restore_root: None) -> None:
    stream = io.StringIO()
    logs.configure(env={logs.ENV: "json"}, stream=stream)
    chatty = logging.getLogger("pgserver")
    chatty.info("Running commandline: initdb ...")
    chatty.warning("XDG_RUNTIME_DIR unset")
    assert [json.loads(line)["level"] for line in stream.getvalue().splitlines()] == ["WARNING"]

    stream = io.StringIO()
    logs.configure(logging.DEBUG, env={logs.ENV: "json"}, stream=stream)
    chatty.info("Running commandline: initdb ...")
    found = [json.loads(line) for line in stream.getvalue().splitlines()]
    assert [(f["level"], f["logger"]) for f in found] == [("DEBUG", "pgserver")]


TOKEN = "tok3n-7f1d2a9c5e-SECRET"


def test_an_url_in_a_message_an_argument_an_extra_field_or_a_traceback_is_redacted() -> None:
    logs.install_redaction()
    log = logging.getLogger("taskflow.test.redact")
    url = f"https://bot:{TOKEN}@hooks.example/in?token={TOKEN}#frag"
    record = log.makeRecord(log.name, logging.INFO, __file__, 1, "POST %s", (url,), None)
    assert record.getMessage() == "POST https://hooks.example/in?[redacted]"
    try:
        raise ConnectionError(f"could not reach {url}")
    except ConnectionError:
        failed = log.makeRecord(log.name, logging.ERROR, __file__, 1, "x", (), sys.exc_info())
    failed.endpoint = url  # as ``extra=`` sets it
    for kind in logs.FORMATS:
        line = logs.formatter(kind).format(failed)
        assert "hooks.example/in?[redacted]" in line
        assert TOKEN not in line


def test_configure_redacts_every_line_and_quiets_the_http_client(restore_root: None) -> None:
    stream = io.StringIO()
    logs.configure(env={logs.ENV: "text"}, stream=stream)
    url = f"https://hooks.example/in?token={TOKEN}"
    logging.getLogger("httpx").info("HTTP Request: POST %s", url)  # quieted: not written
    logging.getLogger("httpx").warning("HTTP trouble: %s", url)
    logging.getLogger("some.library").info("fetched %s", url, extra={"target": url})
    written = stream.getvalue()
    assert "HTTP Request" not in written
    assert written.count("https://hooks.example/in?[redacted]") == 3
    assert TOKEN not in written
