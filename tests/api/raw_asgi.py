"""Driving the ASGI app by hand, for what a client library will not send (a body cut short,
a body larger than it says)."""

from __future__ import annotations

from typing import Any


def post_scope(path: str, headers: list[tuple[bytes, bytes]]) -> dict[str, Any]:
    """The ASGI scope of ``POST path`` from a loopback client, with ``headers`` (a host
    header is added)."""
    return {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": [(b"host", b"taskflow.test"), *headers],
        "client": ("127.0.0.1", 4000),
        "server": ("taskflow.test", 80),
        "state": {},
    }
