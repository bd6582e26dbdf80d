from __future__ import annotations

import os
import re
import stat
from datetime import timedelta
from pathlib import Path

import pytest

from taskflow import errors
from taskflow.config import config

KEY = "k" * 32
NEW = "n" * 40


def test_embedded_default_generates_and_keeps_a_secret(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    env = {"TASKFLOW_DATA_DIR": str(tmp_path)}
    first = config.load(env)
    assert first.embedded
    assert "generated a signing key" in capsys.readouterr().err
    assert config.load(env).secret_keys == first.secret_keys
    assert (tmp_path / "secret_key").stat().st_mode & 0o077 == 0


def test_external_database_needs_explicit_keys(tmp_path: Path) -> None:
    with pytest.raises(errors.ConfigError, match="TASKFLOW_SECRET_KEYS is not set"):
        config.load(
            {"TASKFLOW_DATABASE_URL": "postgresql://db/x", "TASKFLOW_DATA_DIR": str(tmp_path)}
        )


def test_settings_from_the_environment(tmp_path: Path) -> None:
    settings = config.load(
        {
            "TASKFLOW_DATABASE_URL": "postgresql://db/x",
            "TASKFLOW_SECRET_KEYS": f"{NEW}, {KEY}",
            "TASKFLOW_PORT": "9000",
            "TASKFLOW_WORKFLOWS": "pkg.flows, /srv/flows",
            "TASKFLOW_ENV": "prod",
        }
    )
    assert settings.secret_keys == (NEW, KEY)
    assert settings.port == 9000
    assert settings.workflows == ("pkg.flows", "/srv/flows")
    assert not settings.dev
    assert settings.public_url == "http://127.0.0.1:9000"


def test_a_bad_port_says_what_to_write() -> None:
    with pytest.raises(errors.ConfigError, match="write an integer"):
        config.load({"TASKFLOW_PORT": "eighty", "TASKFLOW_SECRET_KEYS": KEY})


def test_trusted_proxies_default_to_nobody_and_are_read_canonically(tmp_path: Path) -> None:
    base = {"TASKFLOW_SECRET_KEYS": KEY, "TASKFLOW_DATA_DIR": str(tmp_path)}
    assert config.load(base).trusted_proxies == ()
    settings = config.load(
        {**base, "TASKFLOW_TRUSTED_PROXIES": " 10.0.0.5, 10.1.2.3/16 ,::1, fd00::/8"}
    )
    # A network written with host bits set still means the network (uvicorn needs it exact).
    assert settings.trusted_proxies == ("10.0.0.5", "10.1.0.0/16", "::1", "fd00::/8")


@pytest.mark.parametrize("entry", ["*", "proxy.internal", "10.0.0.300", "10.0.0.0/33"])
def test_a_trusted_proxy_that_is_not_an_address_is_refused(tmp_path: Path, entry: str) -> None:
    with pytest.raises(errors.ConfigError, match=r"TASKFLOW_TRUSTED_PROXIES: .* is not an IP"):
        config.load(
            {
                "TASKFLOW_SECRET_KEYS": KEY,
                "TASKFLOW_DATA_DIR": str(tmp_path),
                "TASKFLOW_TRUSTED_PROXIES": f"10.0.0.1, {entry}",
            }
        )


def test_signing_keys_shorter_than_32_bytes_are_refused() -> None:
    with pytest.raises(errors.ConfigError, match="key number 2 is 5 bytes long") as refused:
        config.load(
            {"TASKFLOW_DATABASE_URL": "postgresql://db/x", "TASKFLOW_SECRET_KEYS": f"{KEY},short"}
        )
    assert "at least 32 bytes" in refused.value.message
    assert "secrets.token_urlsafe" in refused.value.message


def test_the_key_file_is_private_from_its_creation(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Not chmod after writing (a window where others may read it): created 0600.
    monkeypatch.setattr(Path, "chmod", lambda self, mode: None)
    old = os.umask(0)
    try:
        config.load({"TASKFLOW_DATA_DIR": str(tmp_path / "data")})
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "data" / "secret_key").stat().st_mode) == 0o600
    assert stat.S_IMODE((tmp_path / "data").stat().st_mode) == 0o700
    assert [p.name for p in (tmp_path / "data").iterdir()] == ["secret_key"]


def test_a_world_writable_data_dir_is_refused(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    data.chmod(0o777)
    with pytest.raises(errors.ConfigError, match="may be written by any user") as refused:
        config.load({"TASKFLOW_DATA_DIR": str(data)})
    assert f"chmod 700 {data}" in refused.value.message
    assert not (data / "secret_key").exists()


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a folder away needs root")
def test_a_data_dir_owned_by_another_user_is_refused(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir(mode=0o700)
    os.chown(data, 65534, 65534)
    with pytest.raises(errors.ConfigError, match="owned by user id 65534") as refused:
        config.load({"TASKFLOW_DATA_DIR": str(data)})
    assert "chown -R" in refused.value.message


def test_prod_defaults_and_report_settings(tmp_path: Path) -> None:
    base = {"TASKFLOW_SECRET_KEYS": KEY, "TASKFLOW_DATA_DIR": str(tmp_path)}
    dev = config.load(base)
    assert dev.introspection
    assert dev.report_session_ttl == timedelta(hours=8)
    assert dev.report_max_days == 1830
    prod = config.load({**base, "TASKFLOW_ENV": "prod"})
    assert not prod.introspection
    assert config.load(
        {**base, "TASKFLOW_ENV": "prod", "TASKFLOW_GRAPHQL_INTROSPECTION": "true"}
    ).introspection
    custom = config.load(
        {**base, "TASKFLOW_REPORT_SESSION_TTL": "90m", "TASKFLOW_REPORT_MAX_DAYS": "366"}
    )
    assert custom.report_session_ttl == timedelta(minutes=90)
    assert custom.report_max_days == 366
    for name, value in (
        ("TASKFLOW_REPORT_SESSION_TTL", "99999999999999d"),
        ("TASKFLOW_REPORT_MAX_DAYS", "99999999999999999999"),
        ("TASKFLOW_GRAPHQL_INTROSPECTION", "maybe"),
    ):
        with pytest.raises(errors.ConfigError, match=name):
            config.load({**base, name: value})


def test_a_key_file_readable_by_others_is_closed_with_a_warning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    env = {"TASKFLOW_DATA_DIR": str(tmp_path)}
    first = config.load(env)
    key_file = tmp_path / "secret_key"
    key_file.chmod(0o644)
    capsys.readouterr()
    assert config.load(env).secret_keys == first.secret_keys
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    assert "was readable by other users" in capsys.readouterr().err


def test_pool_sizes_and_statement_cache_default_and_come_from_the_environment(
    tmp_path: Path,
) -> None:
    base = {"TASKFLOW_SECRET_KEYS": KEY, "TASKFLOW_DATA_DIR": str(tmp_path)}
    default = config.load(base)
    assert (default.db_pool_min, default.db_pool_max, default.db_statement_cache_size) == (
        1,
        10,
        100,
    )
    behind_pgbouncer = config.load(
        {
            **base,
            "TASKFLOW_DB_POOL_MIN": "0",
            "TASKFLOW_DB_POOL_MAX": "4",
            "TASKFLOW_DB_STATEMENT_CACHE_SIZE": "0",
        }
    )
    assert behind_pgbouncer.db_pool_min == 0
    assert behind_pgbouncer.db_pool_max == 4
    assert behind_pgbouncer.db_statement_cache_size == 0
    # A minimum above the default maximum raises the maximum with it.
    assert config.load({**base, "TASKFLOW_DB_POOL_MIN": "20"}).db_pool_max == 20


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        (
            "TASKFLOW_DB_POOL_MIN",
            "-1",
            "TASKFLOW_DB_POOL_MIN='-1' is not a whole number of at least 0",
        ),
        (
            "TASKFLOW_DB_POOL_MAX",
            "0",
            "TASKFLOW_DB_POOL_MAX='0' is not a whole number of at least 1",
        ),
        ("TASKFLOW_DB_POOL_MAX", "ten", "TASKFLOW_DB_POOL_MAX='ten' is not a whole number"),
        ("TASKFLOW_DB_STATEMENT_CACHE_SIZE", "-5", "is not a whole number of at least 0"),
        ("TASKFLOW_DB_STATEMENT_CACHE_SIZE", "1.5", "write e.g. 100"),
    ],
)
def test_a_bad_pool_setting_says_what_to_write(
    tmp_path: Path, name: str, value: str, message: str
) -> None:
    with pytest.raises(errors.ConfigError, match=re.escape(message)):
        config.load({"TASKFLOW_SECRET_KEYS": KEY, "TASKFLOW_DATA_DIR": str(tmp_path), name: value})


def test_a_pool_minimum_above_its_maximum_is_refused(tmp_path: Path) -> None:
    with pytest.raises(
        errors.ConfigError, match="TASKFLOW_DB_POOL_MIN=5 is above TASKFLOW_DB_POOL_MAX=2"
    ):
        config.load(
            {
                "TASKFLOW_SECRET_KEYS": KEY,
                "TASKFLOW_DATA_DIR": str(tmp_path),
                "TASKFLOW_DB_POOL_MIN": "5",
                "TASKFLOW_DB_POOL_MAX": "2",
            }
        )


def test_live_settings_from_the_environment(tmp_path: Path) -> None:
    env = {
        "TASKFLOW_DATABASE_URL": "postgresql://db/x",
        "TASKFLOW_SECRET_KEYS": KEY,
        "TASKFLOW_DATA_DIR": str(tmp_path),
        "TASKFLOW_LIVE_MAX_SUBSCRIPTIONS": "5",
        "TASKFLOW_LIVE_PING_INTERVAL": "2.5",
    }
    live = config.load(env).live
    assert (live.max_subscriptions, live.ping_interval, live.max_connections) == (5, 2.5, 10)
    with pytest.raises(errors.ConfigError, match="TASKFLOW_LIVE_MAX_QUEUED must be a whole"):
        config.load({**env, "TASKFLOW_LIVE_MAX_QUEUED": "1.5"})
    with pytest.raises(errors.ConfigError, match="TASKFLOW_LIVE_IDLE_TIMEOUT"):
        config.load({**env, "TASKFLOW_LIVE_IDLE_TIMEOUT": "-1"})


def test_a_pooled_deployment_names_its_listen_url_and_scheduler(tmp_path: Path) -> None:
    base = {
        "TASKFLOW_SECRET_KEYS": KEY,
        "TASKFLOW_DATA_DIR": str(tmp_path),
        "TASKFLOW_DATABASE_URL": "postgresql://app@pgbouncer:6432/taskflow",
    }
    default = config.load(base)
    assert (default.database_listen_url, default.scheduler, default.scheduler_poll) == (
        None,
        "listen",
        1.0,
    )
    pooled = config.load(
        {
            **base,
            "TASKFLOW_DATABASE_LISTEN_URL": "postgresql://app@db:5432/taskflow",
            "TASKFLOW_SCHEDULER": "Poll",
            "TASKFLOW_SCHEDULER_POLL_SECONDS": "2.5",
            "TASKFLOW_DATABASE_READ_URL": "postgresql://app@replica:5432/taskflow",
            "TASKFLOW_DATABASE_READ_MAX_LAG_SECONDS": "5",
        }
    )
    assert default.database_read_url is None
    assert (pooled.database_read_url, pooled.database_read_max_lag) == (
        "postgresql://app@replica:5432/taskflow",
        5.0,
    )
    assert pooled.database_listen_url == "postgresql://app@db:5432/taskflow"
    assert (pooled.scheduler, pooled.scheduler_poll) == ("poll", 2.5)


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"TASKFLOW_SCHEDULER": "cron"}, "TASKFLOW_SCHEDULER='cron' is not a scheduler"),
        ({"TASKFLOW_SCHEDULER_POLL_SECONDS": "0"}, "TASKFLOW_SCHEDULER_POLL_SECONDS"),
        (
            {"TASKFLOW_DATABASE_LISTEN_URL": "postgresql://db/taskflow"},
            "TASKFLOW_DATABASE_LISTEN_URL is set but TASKFLOW_DATABASE_URL is not",
        ),
        (
            {"TASKFLOW_DATABASE_READ_URL": "postgresql://replica/taskflow"},
            "TASKFLOW_DATABASE_READ_URL is set but TASKFLOW_DATABASE_URL is not",
        ),
        (
            {"TASKFLOW_DATABASE_READ_MAX_LAG_SECONDS": "-1"},
            "TASKFLOW_DATABASE_READ_MAX_LAG_SECONDS",
        ),
    ],
)
def test_a_bad_scheduler_or_listen_setting_says_what_to_write(
    tmp_path: Path, env: dict[str, str], message: str
) -> None:
    with pytest.raises(errors.ConfigError, match=re.escape(message)):
        config.load({"TASKFLOW_SECRET_KEYS": KEY, "TASKFLOW_DATA_DIR": str(tmp_path), **env})


def test_with_the_embedded_database_off_a_database_url_is_required(tmp_path: Path) -> None:
    env = {"TASKFLOW_SECRET_KEYS": KEY, "TASKFLOW_DATA_DIR": str(tmp_path)}
    with pytest.raises(errors.ConfigError, match="the embedded database is off"):
        config.load({**env, "TASKFLOW_EMBEDDED_DATABASE": "false"})
    external = config.load(
        {**env, "TASKFLOW_EMBEDDED_DATABASE": "false", "TASKFLOW_DATABASE_URL": "postgresql://db/t"}
    )
    assert not external.embedded
    assert config.load(env).embedded  # on by default: README's first command


def test_the_forecast_settings_and_their_refusals() -> None:
    from taskflow import errors as errs
    from taskflow.config import config as cfg

    base = {"TASKFLOW_SECRET_KEYS": "k" * 40}
    found = cfg.load(
        {**base, "TASKFLOW_FORECAST_MIN_HISTORY": "5", "TASKFLOW_FORECAST_THRESHOLD": "0.7"}
        | {"TASKFLOW_FORECAST_ALERT": "0.9"}
    )
    assert (found.forecast_min_history, found.forecast_threshold) == (5, 0.7)
    assert found.forecast_alert == 0.9
    defaults = cfg.load(base)
    assert (defaults.forecast_min_history, defaults.forecast_threshold) == (20, 0.5)
    assert defaults.forecast_alert == 0.7
    for name, value in (
        ("TASKFLOW_FORECAST_THRESHOLD", "2"),
        ("TASKFLOW_FORECAST_ALERT", "-1"),
        ("TASKFLOW_FORECAST_MIN_HISTORY", "x"),
    ):
        with pytest.raises(errs.ConfigError):
            cfg.load({**base, name: value})
