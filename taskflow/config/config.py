"""Settings from the environment (documented in README.md, "Configuration")."""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path

from taskflow import errors
from taskflow.config import env_values, file_settings, live_settings, mail_config, webhook_settings

#: The repository (or source tree) root: bundled calendars/ and examples/ live here.
PROJECT_ROOT = Path(__file__).resolve().parents[2]


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
    #: The breach forecast: past slots needed before it answers, and the probability from
    #: which a slot is at risk (``TASKFLOW_FORECAST_MIN_HISTORY`` / ``_THRESHOLD``).
    forecast_min_history: int = 20
    forecast_threshold: float = 0.5
    #: The forecast from which the worker writes ``clock.forecast_at_risk`` (once per slot
    #: until it falls below again; ``TASKFLOW_FORECAST_ALERT``).
    forecast_alert: float = 0.7
    #: Addresses and networks of reverse proxies whose ``X-Forwarded-For`` is believed;
    #: empty: nobody's, the client is the peer of the connection.
    trusted_proxies: tuple[str, ...] = ()
    #: Failed firings after which a timer is parked dead (``TASKFLOW_TIMER_MAX_ATTEMPTS``).
    timer_max_attempts: int = 8
    #: The first retry's backoff and its cap, in seconds (``TASKFLOW_TIMER_BACKOFF_*``).
    timer_backoff_base: float = 30.0
    timer_backoff_max: float = 3600.0
    #: Automatic steps: a worker's lease on a step, seconds (``TASKFLOW_STEP_LEASE``); where
    #: the expense-approval example posts payments (``TASKFLOW_PAYMENTS_URL``).
    step_lease: float = 300.0
    payments_url: str = "http://127.0.0.1:8765/payments"
    #: The longest time to live ``taskflow token`` (and ``demo``) will mint.
    token_max_ttl: timedelta = timedelta(days=30)
    #: How long a report page sign-in lasts (its server-side session).
    report_session_ttl: timedelta = timedelta(hours=8)
    #: The longest window ``slaReport`` and the report page accept.
    report_max_days: int = 1830
    #: GraphQL introspection (``__schema``, ``__type``); default: on in ``dev`` only.
    introspection: bool = True
    #: Input limits at the edge (taskflow/api/limits.py; README "GraphQL conventions and limits").
    max_body_bytes: int = 1024 * 1024
    max_text_chars: int = 10_000
    max_document_bytes: int = 256 * 1024
    max_query_cost: int = 50_000
    #: Connections the pool keeps open and may open (``TASKFLOW_DB_POOL_MIN`` / ``_MAX``).
    db_pool_min: int = 1
    db_pool_max: int = 10
    #: Prepared statements asyncpg keeps per connection (``TASKFLOW_DB_STATEMENT_CACHE_SIZE``);
    #: 0 behind a pooler that cannot keep them (PgBouncer in transaction mode before 1.21).
    db_statement_cache_size: int = 100
    #: A direct PostgreSQL URL for LISTEN when ``database_url`` goes through a pooler in
    #: transaction mode (``TASKFLOW_DATABASE_LISTEN_URL``, docs/deploy.md); it also runs the
    #: migrations. None: ``database_url`` serves both.
    database_listen_url: str | None = None
    #: A streaming replica's URL for reads that may lag (``TASKFLOW_DATABASE_READ_URL``:
    #: reports, insights, history; docs/deploy.md). None: everything reads the primary.
    database_read_url: str | None = None
    #: Replica lag (s) past which they read the primary (``..._READ_MAX_LAG_SECONDS``).
    database_read_max_lag: float = 30.0
    #: How workers learn a timer is due (``TASKFLOW_SCHEDULER``): "listen" (NOTIFY wakes
    #: them at once, polling once a second besides) or "poll" (no LISTEN connection; they
    #: look every ``scheduler_poll`` seconds, ``TASKFLOW_SCHEDULER_POLL_SECONDS``).
    scheduler: str = "listen"
    scheduler_poll: float = 1.0
    #: Who may read ``GET /metrics``: "loopback" (clients on this machine), "off", or
    #: "token:<bearer>" (``TASKFLOW_METRICS``, see :func:`metrics_access`).
    metrics: str = "loopback"
    #: Needs attention: an active run unchanged this long is IDLE (``TASKFLOW_IDLE_AFTER``) ...
    idle_after: timedelta = timedelta(days=14)
    #: ... and a kept event expiring within this is EVENT_EXPIRING
    #: (``TASKFLOW_EVENT_EXPIRING_WITHIN``).
    event_expiring_within: timedelta = timedelta(hours=1)
    #: Start even when a loaded definition differs from the one deployed at its name and
    #: version (``TASKFLOW_ALLOW_DEFINITION_DRIFT``; development only, logged loudly).
    allow_definition_drift: bool = False
    #: E-mail (``TASKFLOW_SMTP_URL`` and friends, ``mail_config``); None: nothing is mailed.
    mail: mail_config.MailSettings | None = None
    #: Days ended runs are kept when a workflow sets no retention (None: for ever).
    retention_days: int | None = None
    #: Webhook endpoints and delivery (``TASKFLOW_WEBHOOK_*``, taskflow/config/webhook_settings.py).
    webhooks: webhook_settings.WebhookSettings = field(
        default_factory=webhook_settings.WebhookSettings
    )
    #: GraphQL subscriptions (``TASKFLOW_LIVE_*``, taskflow/config/live_settings.py).
    live: live_settings.LiveSettings = field(default_factory=live_settings.LiveSettings)
    #: Attached files (``TASKFLOW_FILES_*``, taskflow/config/file_settings.py); None: in
    #: ``<data_dir>/files``.
    files: file_settings.FileSettings | None = None

    @property
    def embedded(self) -> bool:
        """True when taskflow runs its own PostgreSQL from ``pgserver``."""
        return self.database_url is None

    @property
    def dev(self) -> bool:
        return self.env == "dev"


def _split(value: str) -> tuple[str, ...]:
    return tuple(part.strip() for part in value.split(",") if part.strip())


#: The shortest signing key accepted (bytes of UTF-8): 256 bits.
MIN_KEY_BYTES = 32


def _secret_keys(env: Mapping[str, str], data_dir: Path, embedded: bool) -> tuple[str, ...]:
    configured = _split(env.get("TASKFLOW_SECRET_KEYS", ""))
    if configured:
        for number, key in enumerate(configured, start=1):
            if len(key.encode()) < MIN_KEY_BYTES:
                raise errors.ConfigError(
                    f"TASKFLOW_SECRET_KEYS: key number {number} is {len(key.encode())} bytes "
                    f"long; every key must be at least {MIN_KEY_BYTES} bytes. Generate one with "
                    'python -c "import secrets; print(secrets.token_urlsafe(48))" and put it '
                    "first (keep the old key after it while its tokens should still verify)."
                )
        return configured
    if not embedded:
        raise errors.ConfigError(
            "TASKFLOW_SECRET_KEYS is not set. With an external database taskflow cannot "
            "invent a signing key: set TASKFLOW_SECRET_KEYS to one or more long random "
            "strings, comma-separated, newest first "
            '(e.g. python -c "import secrets; print(secrets.token_urlsafe(48))").'
        )
    key_file = data_dir / "secret_key"
    check_data_dir(data_dir)
    if not key_file.exists():
        _write_private(key_file, secrets.token_urlsafe(48) + "\n")
        print(
            f"taskflow: warning: TASKFLOW_SECRET_KEYS is not set; generated a signing key "
            f"in {key_file}. Set TASKFLOW_SECRET_KEYS for any shared or production use.",
            file=sys.stderr,
        )
    elif stat.S_IMODE(key_file.stat().st_mode) & 0o077:
        # A key file left readable by an older version (or by hand): close it now, and say so.
        key_file.chmod(0o600)
        print(
            f"taskflow: warning: {key_file} was readable by other users; its mode is now 0600. "
            "If anyone may have read it, delete it to generate a new key (every token signed "
            "with the old one stops working).",
            file=sys.stderr,
        )
    try:
        key = key_file.read_text().strip()
    except OSError as exc:
        raise errors.ConfigError(
            f"Cannot read the signing key file {key_file}: {exc.strerror}. Fix its owner and "
            "mode (chmod 600), or set TASKFLOW_SECRET_KEYS."
        ) from None
    if len(key.encode()) < MIN_KEY_BYTES:
        raise errors.ConfigError(
            f"The signing key in {key_file} is shorter than {MIN_KEY_BYTES} bytes: delete the "
            "file to have a new one generated (every token it signed stops working), or set "
            "TASKFLOW_SECRET_KEYS."
        )
    return (key,)


def _write_private(path: Path, text: str) -> None:
    """Create ``path`` readable by its owner only, atomically: it never exists with another
    mode, and a half-written key is never read (write a 0600 temporary file, then rename)."""
    temporary = path.with_name(f".{path.name}.{secrets.token_hex(8)}.tmp")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    try:
        with os.fdopen(fd, "w") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        # link() fails when another process made the key meanwhile: theirs is kept.
        with contextlib.suppress(FileExistsError):
            os.link(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)


def check_data_dir(data_dir: Path) -> None:
    """Create the data dir (mode 0700) or refuse one that others could tamper with.

    It holds the signing key and the embedded database: a folder anyone may write to
    (or one another user owns) would let them swap either.
    """
    if not data_dir.exists():
        try:
            data_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        except OSError as exc:
            raise errors.ConfigError(
                f"Cannot create the data dir {data_dir}: {exc.strerror}. Set TASKFLOW_DATA_DIR "
                "to a folder you may write to."
            ) from None
        return
    info = data_dir.stat()
    if not stat.S_ISDIR(info.st_mode):
        raise errors.ConfigError(
            f"The data dir {data_dir} is not a folder: set TASKFLOW_DATA_DIR to a folder."
        )
    if hasattr(os, "geteuid") and info.st_uid != os.geteuid():
        raise errors.ConfigError(
            f"The data dir {data_dir} is owned by user id {info.st_uid}, not by the user "
            f"running taskflow ({os.geteuid()}): run taskflow as its owner, or give it to this "
            f"user (chown -R {os.geteuid()} {data_dir})."
        )
    if info.st_mode & stat.S_IWOTH:
        raise errors.ConfigError(
            f"The data dir {data_dir} may be written by any user (mode "
            f"{stat.S_IMODE(info.st_mode):o}), who could replace the signing key or the "
            f"database: chmod 700 {data_dir} (or o-w)."
        )


def load(env: Mapping[str, str] | None = None) -> Settings:
    """Read settings from ``env`` (default: the process environment)."""
    env = os.environ if env is None else env
    database_url = env.get("TASKFLOW_DATABASE_URL") or None
    if database_url is None and not _flag(env, "TASKFLOW_EMBEDDED_DATABASE", True):
        raise errors.ConfigError(
            "TASKFLOW_DATABASE_URL is not set and the embedded database is off "
            "(TASKFLOW_EMBEDDED_DATABASE=false, as in the container image): set "
            "TASKFLOW_DATABASE_URL to your PostgreSQL (postgresql://user:pass@host:5432/db), "
            "see docs/deploy.md."
        )
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
    env_name = env.get("TASKFLOW_ENV", "dev")
    pool_min, pool_max = _pool_sizes(env)
    return Settings(
        database_url=database_url,
        data_dir=data_dir,
        secret_keys=_secret_keys(env, data_dir, database_url is None),
        host=host,
        port=port,
        workflows=workflows,
        calendars=calendars,
        env=env_name,
        public_url=public_url.rstrip("/"),
        sla_at_risk=_fraction(env, "TASKFLOW_SLA_AT_RISK", 0.75),
        forecast_min_history=_whole(env, "TASKFLOW_FORECAST_MIN_HISTORY", 20, most=100000),
        forecast_threshold=_fraction(env, "TASKFLOW_FORECAST_THRESHOLD", 0.5),
        forecast_alert=_fraction(env, "TASKFLOW_FORECAST_ALERT", 0.7),
        trusted_proxies=_networks(env, "TASKFLOW_TRUSTED_PROXIES"),
        timer_max_attempts=int(_positive(env, "TASKFLOW_TIMER_MAX_ATTEMPTS", 8, whole=True)),
        timer_backoff_base=_positive(env, "TASKFLOW_TIMER_BACKOFF_BASE", 30.0),
        timer_backoff_max=_positive(env, "TASKFLOW_TIMER_BACKOFF_MAX", 3600.0),
        step_lease=_positive(env, "TASKFLOW_STEP_LEASE", 300.0),
        payments_url=env.get("TASKFLOW_PAYMENTS_URL", "http://127.0.0.1:8765/payments"),
        token_max_ttl=_duration(env, "TASKFLOW_TOKEN_MAX_TTL", timedelta(days=30)),
        report_session_ttl=_duration(env, "TASKFLOW_REPORT_SESSION_TTL", timedelta(hours=8)),
        report_max_days=_whole(env, "TASKFLOW_REPORT_MAX_DAYS", 1830, most=36500),
        introspection=_flag(env, "TASKFLOW_GRAPHQL_INTROSPECTION", env_name == "dev"),
        max_body_bytes=int(_positive(env, "TASKFLOW_MAX_BODY_BYTES", 1024 * 1024, whole=True)),
        max_text_chars=int(_positive(env, "TASKFLOW_MAX_TEXT_CHARS", 10_000, whole=True)),
        max_document_bytes=int(
            _positive(env, "TASKFLOW_MAX_DOCUMENT_BYTES", 256 * 1024, whole=True)
        ),
        max_query_cost=int(_positive(env, "TASKFLOW_MAX_QUERY_COST", 50_000, whole=True)),
        db_pool_min=pool_min,
        db_pool_max=pool_max,
        db_statement_cache_size=_count(env, "TASKFLOW_DB_STATEMENT_CACHE_SIZE", 100, least=0),
        database_listen_url=_beside_url(env, "LISTEN", database_url, "a direct connection to"),
        database_read_url=_beside_url(env, "READ", database_url, "a streaming replica of"),
        database_read_max_lag=_positive(env, "TASKFLOW_DATABASE_READ_MAX_LAG_SECONDS", 30.0),
        scheduler=_scheduler(env),
        scheduler_poll=_positive(env, "TASKFLOW_SCHEDULER_POLL_SECONDS", 1.0),
        metrics=metrics_access(env.get("TASKFLOW_METRICS") or "loopback")[0],
        idle_after=_duration(env, "TASKFLOW_IDLE_AFTER", timedelta(days=14)),
        event_expiring_within=_duration(env, "TASKFLOW_EVENT_EXPIRING_WITHIN", timedelta(hours=1)),
        allow_definition_drift=_flag(env, "TASKFLOW_ALLOW_DEFINITION_DRIFT", False),
        mail=mail_config.load(env),
        retention_days=_whole(env, "TASKFLOW_RETENTION_DAYS", 0, most=36500) or None,
        webhooks=webhook_settings.load(env, _flag, _duration, _positive, dev=env_name == "dev"),
        live=live_settings.load(env, _positive),
        files=file_settings.load(env, data_dir),
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


def _beside_url(
    env: Mapping[str, str], kind: str, database_url: str | None, what: str
) -> str | None:
    """``TASKFLOW_DATABASE_{kind}_URL`` (``LISTEN``, ``READ``): another way to the external
    database (``what`` says which), so refused without one."""
    name = f"TASKFLOW_DATABASE_{kind}_URL"
    url = env.get(name) or None
    if url is not None and database_url is None:
        raise errors.ConfigError(
            f"{name} is set but TASKFLOW_DATABASE_URL is not: it is {what} the external "
            "database TASKFLOW_DATABASE_URL names; set both, or neither for the embedded database."
        )
    return url


def _scheduler(env: Mapping[str, str]) -> str:
    """``TASKFLOW_SCHEDULER``: listen (the default) or poll."""
    value = (env.get("TASKFLOW_SCHEDULER") or "listen").strip().lower()
    if value not in ("listen", "poll"):
        raise errors.ConfigError(
            f"TASKFLOW_SCHEDULER={value!r} is not a scheduler: write listen (a notification "
            "wakes the workers at once) or poll (workers look every "
            "TASKFLOW_SCHEDULER_POLL_SECONDS, for databases reached only through a pooler)."
        )
    return value


def _pool_sizes(env: Mapping[str, str]) -> tuple[int, int]:
    """The connection pool's least and largest size (docs/operations.md)."""
    low = _count(env, "TASKFLOW_DB_POOL_MIN", 1, least=0)
    high = _count(env, "TASKFLOW_DB_POOL_MAX", max(10, low), least=1)
    if low > high:
        raise errors.ConfigError(
            f"TASKFLOW_DB_POOL_MIN={low} is above TASKFLOW_DB_POOL_MAX={high}: the pool "
            "cannot keep more connections open than it may open; lower the first or raise "
            "the second."
        )
    return low, high


_fraction = env_values.fraction
_networks = env_values.networks
_positive = env_values.positive
_duration = env_values.duration
_whole = env_values.whole
_flag = env_values.flag
_count = env_values.count
