"""HTTPS holiday feeds: an ICS file fetched from a URL into the calendars folder, where a
calendar's ``[[ics]] file`` reads it (docs/calendars.md, "ICS feeds over HTTPS").

A fetch sends the last copy's ``ETag`` (``If-None-Match``) and ``Last-Modified``
(``If-Modified-Since``), kept beside it in ``<file>.feed.json``; ``304`` keeps the copy.
A new body is read up to a size cap and parsed as the calendars would (a bad date refused
naming its line) before it replaces the copy, atomically. Any failure (the address guard
webhooks use, a timeout, a TLS error, a status other than 200/304, a body over the cap, an
ICS the parser refuses) raises :class:`FeedFailed` and leaves the last good copy as it was.
"""

from __future__ import annotations

import asyncio
import json
import os
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import httpx

from taskflow import errors
from taskflow.config.webhook_settings import WebhookSettings
from taskflow.core.clocks.calendars import ics
from taskflow.core.delivery import redact
from taskflow.service.common.container import Services
from taskflow.service.delivery import webhook_net

#: A holiday feed larger than this is refused (``TASKFLOW_CALENDAR_FEED_MAX_BYTES``).
MAX_BYTES = 2_000_000
#: How often the worker asks every feed again (a conditional GET: usually a 304).
EVERY = timedelta(hours=6)


class FeedFailed(errors.TaskflowError):
    """A holiday feed could not be fetched or read; the last good copy is kept. Facts:
    ``url`` (as shown: no query, no userinfo) and ``file`` (its copy in the folder)."""

    code = "CALENDAR_FEED_FAILED"

    @property
    def file(self) -> str:
        return str(self.facts.get("file", ""))

    @property
    def url(self) -> str:
        return str(self.facts.get("url", ""))


@dataclass(frozen=True)
class FeedSettings:
    """How feeds are fetched: a CA to trust instead of the system's (a private CA), the
    size cap, and the time one fetch may take."""

    ca_file: str | None = None
    max_bytes: int = MAX_BYTES
    timeout: float = 15.0

    @classmethod
    def from_env(cls) -> FeedSettings:
        """``TASKFLOW_CALENDAR_FEED_CA``, ``TASKFLOW_CALENDAR_FEED_MAX_BYTES``,
        ``TASKFLOW_CALENDAR_FEED_TIMEOUT``."""
        try:
            return cls(
                ca_file=os.environ.get("TASKFLOW_CALENDAR_FEED_CA") or None,
                max_bytes=int(os.environ.get("TASKFLOW_CALENDAR_FEED_MAX_BYTES", MAX_BYTES)),
                timeout=float(os.environ.get("TASKFLOW_CALENDAR_FEED_TIMEOUT", 15.0)),
            )
        except ValueError as exc:
            raise errors.ConfigError(
                f"TASKFLOW_CALENDAR_FEED_MAX_BYTES / _TIMEOUT must be numbers: {exc}"
            ) from None


@dataclass(frozen=True)
class Net:
    """Where a feed may be fetched from (the webhooks' address rules: private, loopback and
    plain-http destinations as ``TASKFLOW_WEBHOOK_ALLOW_*`` say) and how names resolve."""

    rules: WebhookSettings
    resolver: webhook_net.Resolver = webhook_net.system_resolve

    @classmethod
    def of(cls, services: Services) -> Net:
        """The services' rules and resolver."""
        return cls(services.settings.webhooks, services.resolver)


@dataclass(frozen=True)
class Fetched:
    """What one fetch did: ``changed`` (a new copy written) or not (304: the copy stands),
    and how many closures the copy holds."""

    url: str
    file: Path
    changed: bool
    closures: int
    fetched_at: datetime


def _meta_of(file: Path) -> Path:
    return file.with_name(file.name + ".feed.json")


def _conditions(file: Path) -> dict[str, str]:
    """The conditional headers of the last good copy (none without one)."""
    meta = _meta_of(file)
    if not file.exists() or not meta.exists():
        return {}
    kept = json.loads(meta.read_text(encoding="utf-8"))
    headers = {"If-None-Match": kept.get("etag"), "If-Modified-Since": kept.get("modified")}
    return {k: v for k, v in headers.items() if v}


async def fetch(net: Net, url: str, file: Path, settings: FeedSettings, now: datetime) -> Fetched:
    """Fetch ``url`` into ``file`` (an ``.ics`` in the calendars folder) unless unchanged;
    ``net``: where requests may go (the webhooks' address rules) and how names resolve."""
    shown = redact.redacted_url(url)
    if not url.lower().startswith("https://"):
        raise FeedFailed(
            f"feed {shown}: only https:// feeds are fetched", url=shown, file=file.name
        )

    def failed(problem: str) -> FeedFailed:
        return FeedFailed(
            f"feed {shown}: {problem}; the last good copy ({file.name}) is kept",
            url=shown,
            file=file.name,
        )

    try:
        pin = await webhook_net.check_destination(net.rules, url, net.resolver)
    except errors.ValidationError as exc:
        raise failed(exc.message) from None
    try:
        async with asyncio.timeout(settings.timeout):  # httpx's timeout is per phase
            with webhook_net.pinned(pin):
                status, body, etag, modified = await _get(url, file, settings, net.rules)
    except (httpx.HTTPError, TimeoutError) as exc:
        problem = redact.redact_text(str(exc)) or "no answer in time"
        raise failed(f"{type(exc).__name__}: {problem}") from None
    if status == 304:
        return Fetched(url, file, False, _count(file), now)
    if status != 200:
        raise failed(f"HTTP {status}" if status else f"larger than {settings.max_bytes} bytes")
    try:
        closures = ics.closures(body, file.name, ZoneInfo("UTC"))
    except errors.TaskflowError as exc:
        raise failed(exc.message) from None
    _replace(file, body)
    meta = {"url": url, "etag": etag, "modified": modified, "fetched_at": now.isoformat()}
    _replace(_meta_of(file), json.dumps(meta).encode())
    return Fetched(url, file, True, len(closures), now)


async def _get(
    url: str, file: Path, settings: FeedSettings, rules: WebhookSettings
) -> tuple[int, bytes, str | None, str | None]:
    """(status, body, ETag, Last-Modified); status 0 when the body passed the cap."""
    client = webhook_net.client(rules, ca_file=settings.ca_file, timeout=settings.timeout)
    body = b""
    async with client, client.stream("GET", url, headers=_conditions(file)) as answer:
        if answer.status_code == 200:
            async for chunk in answer.aiter_bytes():
                body += chunk
                if len(body) > settings.max_bytes:
                    return 0, b"", None, None
        headers = answer.headers
        return answer.status_code, body, headers.get("etag"), headers.get("last-modified")


def _count(file: Path) -> int:
    return len(ics.closures(file.read_bytes(), file.name, ZoneInfo("UTC")))


def _replace(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically (a reader sees the old copy or the new)."""
    scratch = path.with_name(f".{path.name}.tmp")
    scratch.write_bytes(data)
    scratch.replace(path)


async def refresh(
    net: Net, folder: Path, settings: FeedSettings, now: datetime
) -> tuple[list[Fetched], list[FeedFailed]]:
    """Ask every feed fetched into ``folder`` before (each ``<file>.feed.json`` names its
    URL) again: what was fetched, and what failed (each keeping its last good copy)."""
    done: list[Fetched] = []
    failed: list[FeedFailed] = []
    for file, url in _feeds(folder):
        try:
            if isinstance(url, FeedFailed):
                raise url
            done.append(await fetch(net, url, file, settings, now))
        except FeedFailed as exc:
            failed.append(exc)
    return done, failed


def _feeds(folder: Path) -> list[tuple[Path, str | FeedFailed]]:
    """Each feed's file and URL (from its ``.feed.json``; unreadable: why)."""
    out: list[tuple[Path, str | FeedFailed]] = []
    for meta in sorted(folder.glob("*.feed.json")):
        file = meta.with_name(meta.name.removesuffix(".feed.json"))
        try:
            out.append((file, str(json.loads(meta.read_text(encoding="utf-8"))["url"])))
        except (OSError, ValueError, KeyError) as exc:
            problem = f"{meta.name} cannot be read ({exc}): fetch it again"
            out.append((file, FeedFailed(problem, url="", file=file.name)))
    return out
