"""HTTPS holiday feeds (docs/calendars.md, "ICS feeds over HTTPS") against a real HTTPS server
started here, under a CA made here and passed by configuration (``FeedSettings.ca_file``):
conditional fetches (ETag, Last-Modified), the size cap, and typed failures that keep the
last good copy."""

from __future__ import annotations

import datetime as dt
import ipaddress
import ssl
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from taskflow import cli
from taskflow.core.clocks import calendars
from taskflow.service.clocks import ics_feeds
from taskflow.service.common import container

pytestmark = pytest.mark.anyio

NOW = dt.datetime(2026, 12, 4, 12, tzinfo=dt.UTC)
FEED = (
    "BEGIN:VCALENDAR\nVERSION:2.0\nPRODID:-//test//EN\n"
    "BEGIN:VEVENT\nUID:a\nDTSTART;VALUE=DATE:20270105\nSUMMARY:Stocktake\nEND:VEVENT\n"
    "END:VCALENDAR\n"
)


def _cert(
    subject: str,
    key: ec.EllipticCurvePrivateKey,
    issuer: x509.Name | None,
    signer: ec.EllipticCurvePrivateKey,
    ca: bool,
) -> x509.Certificate:
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)])
    now = dt.datetime.now(dt.UTC)
    built = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(issuer or name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(days=1))
        .not_valid_after(now + dt.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
    )
    if ca:
        built = built.add_extension(
            x509.KeyUsage(False, False, False, False, False, True, True, False, False), True
        )
    else:
        names = [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
        built = built.add_extension(x509.SubjectAlternativeName(names), critical=False)
    return built.sign(signer, hashes.SHA256())


def _pem(path: Path, *parts: bytes) -> str:
    path.write_bytes(b"".join(parts))
    return str(path)


@dataclass
class Feed:
    """What the server answers, and the conditional headers it was sent."""

    body: bytes = FEED.encode()
    status: int = 200
    etag: str = '"v1"'
    seen: list[dict[str, str]] = field(default_factory=list)
    url: str = ""
    ca_file: str = ""


@pytest.fixture
def feed(tmp_path: Path) -> Iterator[Feed]:
    ca_key, key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    ca = _cert("taskflow test CA", ca_key, None, ca_key, True)
    cert = _cert("localhost", key, ca.subject, ca_key, False)
    state = Feed(ca_file=_pem(tmp_path / "ca.pem", ca.public_bytes(serialization.Encoding.PEM)))
    chain = _pem(tmp_path / "server.pem", cert.public_bytes(serialization.Encoding.PEM))
    secret = _pem(
        tmp_path / "server.key",
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        ),
    )

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            state.seen.append({k: v for k, v in self.headers.items() if k.startswith("If-")})
            if state.status == 200 and self.headers.get("If-None-Match") == state.etag:
                self.send_response(304)
                self.end_headers()
                return
            self.send_response(state.status)
            self.send_header("ETag", state.etag)
            self.send_header("Last-Modified", "Fri, 04 Dec 2026 08:00:00 GMT")
            self.send_header("Content-Length", str(len(state.body)))
            self.end_headers()
            self.wfile.write(state.body)

        def log_message(self, *_: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    tls.load_cert_chain(chain, secret)
    server.socket = tls.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    state.url = f"https://localhost:{server.server_address[1]}/holidays.ics"
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


async def test_a_feed_is_fetched_then_asked_again_conditionally(
    services: container.Services, feed: Feed, tmp_path: Path
) -> None:
    file = tmp_path / "holidays.ics"
    settings = ics_feeds.FeedSettings(ca_file=feed.ca_file)
    first = await ics_feeds.fetch(ics_feeds.Net.of(services), feed.url, file, settings, NOW)
    assert (first.changed, first.closures) == (True, 1)
    desk = calendars.from_dict(
        {
            "name": "desk",
            "timezone": "UTC",
            "week": {"mon-fri": ["09:00-17:00"]},
            "ics": [{"file": "holidays.ics", "content": file.read_text()}],
        }
    )
    assert desk.day_plan(dt.date(2027, 1, 5)).reason == "Stocktake"
    again = await ics_feeds.fetch(ics_feeds.Net.of(services), feed.url, file, settings, NOW)
    assert (again.changed, again.closures) == (False, 1)
    assert feed.seen[-1] == {
        "If-None-Match": '"v1"',
        "If-Modified-Since": "Fri, 04 Dec 2026 08:00:00 GMT",
    }


@pytest.mark.parametrize(
    ("change", "words"),
    [
        ({"status": 500, "etag": '"v2"'}, "HTTP 500"),
        ({"body": b"x" * 5000, "etag": '"v2"'}, "larger than 4000 bytes"),
        (
            {"body": FEED.replace("20270105", "20271345").encode(), "etag": '"v2"'},
            "holidays.ics:6, key 'DTSTART'",
        ),
        ({"ca_file": None}, "CERTIFICATE_VERIFY_FAILED"),
    ],
)
async def test_a_failed_fetch_is_typed_and_keeps_the_last_good_copy(
    services: container.Services, feed: Feed, tmp_path: Path, change: dict[str, object], words: str
) -> None:
    file = tmp_path / "holidays.ics"
    settings = ics_feeds.FeedSettings(ca_file=feed.ca_file, max_bytes=4000)
    await ics_feeds.fetch(ics_feeds.Net.of(services), feed.url, file, settings, NOW)
    kept = file.read_bytes()
    if "ca_file" in change:
        settings = ics_feeds.FeedSettings(ca_file=None, max_bytes=4000)
    else:
        for name, value in change.items():
            setattr(feed, name, value)
    with pytest.raises(ics_feeds.FeedFailed) as failed:
        await ics_feeds.fetch(ics_feeds.Net.of(services), feed.url, file, settings, NOW)
    assert failed.value.code == "CALENDAR_FEED_FAILED"
    assert words in failed.value.message, failed.value.message
    assert "last good copy (holidays.ics) is kept" in failed.value.message
    assert file.read_bytes() == kept


async def test_only_https_feeds_are_fetched(services: container.Services, tmp_path: Path) -> None:
    with pytest.raises(ics_feeds.FeedFailed, match="only https"):
        await ics_feeds.fetch(
            ics_feeds.Net.of(services),
            "http://localhost/x.ics",
            tmp_path / "x.ics",
            ics_feeds.FeedSettings(),
            NOW,
        )
    assert not (tmp_path / "x.ics").exists()


def test_the_command_line_fetches_into_the_calendars_folder(
    feed: Feed, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("TASKFLOW_CALENDAR_FEED_CA", feed.ca_file)
    monkeypatch.setenv("TASKFLOW_SECRET_KEYS", "x" * 32)
    argv = ["calendar", "fetch-ics", feed.url, "--into", "h.ics", "--calendars", str(tmp_path)]
    assert cli.main(argv) == 0
    assert "h.ics: fetched, 1 closure(s)" in capsys.readouterr().out
    assert cli.main(argv) == 0
    assert "h.ics: unchanged (304)" in capsys.readouterr().out
    feed.status, feed.etag = 503, '"v3"'
    assert cli.main(argv) == 1
    assert "HTTP 503; the last good copy (h.ics) is kept" in capsys.readouterr().err
    assert (tmp_path / "h.ics").read_text() == FEED


async def test_the_workers_refresh_asks_every_feed_again(
    services: container.Services, feed: Feed, tmp_path: Path
) -> None:
    settings = ics_feeds.FeedSettings(ca_file=feed.ca_file)
    net = ics_feeds.Net.of(services)
    await ics_feeds.fetch(net, feed.url, tmp_path / "a.ics", settings, NOW)
    (tmp_path / "b.ics.feed.json").write_text("{not json")
    feed.body, feed.etag = FEED.replace("Stocktake", "Inventory").encode(), '"v2"'
    done, failed = await ics_feeds.refresh(net, tmp_path, settings, NOW)
    assert [(f.file.name, f.changed) for f in done] == [("a.ics", True)]
    assert "Inventory" in (tmp_path / "a.ics").read_text()
    assert [f.code for f in failed] == ["CALENDAR_FEED_FAILED"]
    assert "b.ics.feed.json cannot be read" in failed[0].message
