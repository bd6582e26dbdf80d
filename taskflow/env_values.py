"""Reading one setting's value from the environment: numbers, durations, flags.

Each reader returns the default for an unset or empty variable and refuses a
malformed one with a :class:`~taskflow.errors.ConfigError` that says what to write.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import timedelta

from taskflow import errors


def fraction(env: Mapping[str, str], name: str, default: float) -> float:
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


def positive(env: Mapping[str, str], name: str, default: float, *, whole: bool = False) -> float:
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


_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


def duration(env: Mapping[str, str], name: str, default: timedelta) -> timedelta:
    text = (env.get(name) or "").strip().lower()
    if not text:
        return default
    if len(text) >= 2 and text[-1] in _UNITS and text[:-1].isdigit() and len(text) < 9:
        seconds = int(text[:-1]) * _UNITS[text[-1]]
        if 60 <= seconds <= 366 * 86400:
            return timedelta(seconds=seconds)
    raise errors.ConfigError(
        f"{name}={text!r} is not a duration between 1 minute and a year: write a number and "
        "a unit, e.g. 90m, 8h, 7d."
    )


def whole(env: Mapping[str, str], name: str, default: int, *, most: int) -> int:
    text = (env.get(name) or "").strip()
    if not text:
        return default
    if text.isdigit() and len(text) <= 9 and 1 <= int(text) <= most:
        return int(text)
    raise errors.ConfigError(f"{name}={text!r} is not a whole number from 1 to {most}.")


def flag(env: Mapping[str, str], name: str, default: bool) -> bool:
    text = (env.get(name) or "").strip().lower()
    if not text:
        return default
    if text in ("1", "true", "yes", "on"):
        return True
    if text in ("0", "false", "no", "off"):
        return False
    raise errors.ConfigError(f"{name}={text!r} is not yes or no: write true or false.")
