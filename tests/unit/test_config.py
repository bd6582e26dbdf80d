from __future__ import annotations

from pathlib import Path

import pytest

from taskflow import config, errors


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
            "TASKFLOW_SECRET_KEYS": "new, old",
            "TASKFLOW_PORT": "9000",
            "TASKFLOW_WORKFLOWS": "pkg.flows, /srv/flows",
            "TASKFLOW_ENV": "prod",
        }
    )
    assert settings.secret_keys == ("new", "old")
    assert settings.port == 9000
    assert settings.workflows == ("pkg.flows", "/srv/flows")
    assert not settings.dev
    assert settings.public_url == "http://127.0.0.1:9000"


def test_a_bad_port_says_what_to_write() -> None:
    with pytest.raises(errors.ConfigError, match="write an integer"):
        config.load({"TASKFLOW_PORT": "eighty", "TASKFLOW_SECRET_KEYS": "k"})
