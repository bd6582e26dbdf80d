"""Settings from the environment (documented in README.md, "Configuration")."""

from __future__ import annotations

import ipaddress
import os
import secrets
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

from taskflow import errors

#: The repository (or source tree) root: bundled calendars/ and examples/ live here.
PROJECT_ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Settings:
    """Everything the process needs to know about its surroundings."""

    #: A PostgreSQL URL, or None for the embedded server in ``data_dir``.
    database_url: str | None
    data_dir: Path
    #: Signing keys, newest first: the first signs, all verify.
    secret_keys: tuple[str, ...]
    host: str
    port: int
    #: Modules or paths holding workflow definitions.
    workflows: tuple[str, ...]
    calendars: Path
    #: "dev" enables GraphiQL; anything else ("prod") disables it.
    env: str
    #: The base URL links are built on (never the request's Host header).
    public_url: str
    #: Share of its budget past which a running SLA clock reads as at risk.
    sla_at_risk: float = 0.75
    #: Addresses and networks of reverse proxies whose ``X-Forwarded-For`` is believed;
    #: empty: nobody's, the client is the peer of the connection.
    trusted_proxies: tuple[str, ...] = ()
    #: Failed firings after which a timer is parked dead (``TASKFLOW_TIMER_MAX_ATTEMPTS``).
    timer_max_attempts: int = 8
    #: The first retry's backoff and its cap, in seconds (``TASKFLOW_TIMER_BACKOFF_*``).
    timer_backoff_base: float = 30.0
    timer_backoff_max: float = 3600.0
    #: The longest time to live ``taskflow token`` (and ``demo``) will mint.
    token_max_ttl: timedelta = timedelta(days=30)
    #: Who may read ``GET /metrics``: "loopback" (clients on this machine), "off", or
    #: "token:<bearer>" (``TASKFLOW_METRICS``, see :func:`metrics_access`).
    metrics: str = "loopback"

    @property
    def embedded(self) -> bool:
        """True when taskflow runs its own PostgreSQL from ``pgserver``."""
        return self.database_url is None

    @property
    def dev(self) -> bool:
        return self.env == "dev"


def _split(value: str) -> tuple[str, ...]:
    return tuple(part.strip() for part in value.split(",") if part.strip())


def _secret_keys(env: Mapping[str, str], data_dir: Path, embedded: bool) -> tuple[str, ...]:
    configured = _split(env.get("TASKFLOW_SECRET_KEYS", ""))
    if configured:
        return configured
    if not embedded:
        raise errors.ConfigError(
            "TASKFLOW_SECRET_KEYS is not set. With an external database taskflow cannot "
            "invent a signing key: set TASKFLOW_SECRET_KEYS to one or more long random "
            "strings, comma-separated, newest first "
            '(e.g. python -c "import secrets; print(secrets.token_urlsafe(48))").'
        )
    key_file = data_dir / "secret_key"
    if not key_file.exists():
        data_dir.mkdir(parents=True, exist_ok=True)
        key_file.write_text(secrets.token_urlsafe(48) + "\n")
        key_file.chmod(0o600)
        print(
            f"taskflow: warning: TASKFLOW_SECRET_KEYS is not set; generated a signing key "
            f"in {key_file}. Set TASKFLOW_SECRET_KEYS for any shared or production use.",
            file=sys.stderr,
        )
    return (key_file.read_text().strip(),)


def load(env: Mapping[str, str] | None = None) -> Settings:
    """Read settings from ``env`` (default: the process environment)."""
    env = os.environ if env is None else env
    database_url = env.get("TASKFLOW_DATABASE_URL") or None
    data_dir = Path(env.get("TASKFLOW_DATA_DIR") or ".taskflow").resolve()
    port_text = env.get("TASKFLOW_PORT", "8000")
    try:
        port = int(port_text)
    except ValueError:
        raise errors.ConfigError(
            f"TASKFLOW_PORT={port_text!r} is not a port number: write an integer such as 8000."
        ) from None
    host = env.get("TASKFLOW_HOST", "127.0.0.1")
    workflows = _split(env.get("TASKFLOW_WORKFLOWS", "")) or (str(PROJECT_ROOT / "examples"),)
    calendars = Path(env.get("TASKFLOW_CALENDARS") or PROJECT_ROOT / "calendars")
    public_url = env.get("TASKFLOW_PUBLIC_URL") or f"http://{host}:{port}"
    return Settings(
        database_url=database_url,
        data_dir=data_dir,
        secret_keys=_secret_keys(env, data_dir, database_url is None),
        host=host,
        port=port,
        workflows=workflows,
        calendars=calendars,
        env=env.get("TASKFLOW_ENV", "dev"),
        public_url=public_url.rstrip("/"),
        sla_at_risk=_fraction(env, "TASKFLOW_SLA_AT_RISK", 0.75),
        trusted_proxies=_networks(env, "TASKFLOW_TRUSTED_PROXIES"),
        timer_max_attempts=int(_positive(env, "TASKFLOW_TIMER_MAX_ATTEMPTS", 8, whole=True)),
        timer_backoff_base=_positive(env, "TASKFLOW_TIMER_BACKOFF_BASE", 30.0),
        timer_backoff_max=_positive(env, "TASKFLOW_TIMER_BACKOFF_MAX", 3600.0),
        token_max_ttl=_duration(env, "TASKFLOW_TOKEN_MAX_TTL", timedelta(days=30)),
        metrics=metrics_access(env.get("TASKFLOW_METRICS") or "loopback")[0],
    )


#: The shortest bearer token ``TASKFLOW_METRICS=token:...`` accepts.
METRICS_TOKEN_MIN = 16


def metrics_access(value: str) -> tuple[str, str | None]:
    """``TASKFLOW_METRICS`` read: (the setting as given, the bearer token or None).

    ``loopback`` (the default) serves clients on this machine, ``off`` nobody, and
    ``token:<bearer>`` whoever sends ``Authorization: Bearer <bearer>``.
    """
    text = value.strip()
    if text in ("loopback", "off"):
        return text, None
    if text.startswith("token:"):
        token = text.removeprefix("token:")
        if len(token) >= METRICS_TOKEN_MIN and token.strip() == token:
            return text, token
    raise errors.ConfigError(
        "TASKFLOW_METRICS must be loopback (the default: clients on this machine), off, or "
        f"token:<bearer> with a bearer of at least {METRICS_TOKEN_MIN} characters and no "
        'spaces (e.g. token:$(python -c "import secrets; print(secrets.token_urlsafe(32))")).'
    )


def _duration(env: Mapping[str, str], name: str, default: timedelta) -> timedelta:
    """A span such as ``90m``, ``8h``, ``30d`` or ``1w`` (the grammar of ``--ttl``)."""
    text = (env.get(name) or "").strip().lower()
    if not text:
        return default
    units = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}
    if len(text) >= 2 and text[-1] in units and text[:-1].isdigit() and int(text[:-1]) > 0:
        return timedelta(seconds=int(text[:-1]) * units[text[-1]])
    raise errors.ConfigError(
        f"{name}={text!r} is not a span of time: write a number and a unit, e.g. 8h, 30d, 1w."
    )


def _networks(env: Mapping[str, str], name: str) -> tuple[str, ...]:
    """IP addresses and CIDR networks, comma-separated, in their canonical spelling.

    Checked here because uvicorn would take a malformed entry for a literal host
    name and silently trust nothing (or a unix socket path) instead.
    """
    found = []
    for entry in _split(env.get(name, "")):
        try:
            if "/" in entry:
                found.append(str(ipaddress.ip_network(entry, strict=False)))
            else:
                found.append(str(ipaddress.ip_address(entry)))
        except ValueError:
            raise errors.ConfigError(
                f"{name}: {entry!r} is not an IP address or network: list the addresses of "
                "your reverse proxies, comma-separated, e.g. 10.0.0.5, 10.1.0.0/16 "
                '("*" is not accepted: it would believe any client\'s X-Forwarded-For).'
            ) from None
    return tuple(found)


def _fraction(env: Mapping[str, str], name: str, default: float) -> float:
    text = env.get(name)
    if not text:
        return default
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 < value <= 1:
        raise errors.ConfigError(f"{name}={text!r} is not a fraction: write e.g. 0.75 (75 %).")
    return value


def _positive(env: Mapping[str, str], name: str, default: float, *, whole: bool = False) -> float:
    """A positive number of seconds (or, ``whole``, a positive integer count)."""
    text = env.get(name)
    if not text:
        return default
    try:
        value = float(int(text)) if whole else float(text)
    except ValueError:
        value = -1.0
    if not 0 < value < float("inf"):
        kind = "a whole number above 0, e.g. 8" if whole else "a number of seconds above 0"
        raise errors.ConfigError(f"{name}={text!r} is not {kind}.")
    return value
