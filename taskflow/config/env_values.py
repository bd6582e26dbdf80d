"""Reading one setting's value from the environment: numbers, durations, flags.

Each reader returns the default for an unset or empty variable and refuses a
malformed one with a :class:`~taskflow.errors.ConfigError` that says what to write.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable, Mapping
from datetime import timedelta
from typing import TypeVar

from taskflow import errors

N = TypeVar("N", int, float)


def _number(
    env: Mapping[str, str],
    name: str,
    default: N,
    parse: Callable[[str], N],
    fits: Callable[[N], bool],
    says: str,
) -> N:
    """The variable's number when it parses and fits, the default when it is unset or
    empty; refused as ``NAME='text' is not <says>`` otherwise."""
    text = env.get(name)
    if not text:
        return default
    try:
        value: N | None = parse(text)
    except ValueError:
        value = None
    if value is None or not fits(value):
        raise errors.ConfigError(f"{name}={text!r} is not {says}")
    return value


def fraction(env: Mapping[str, str], name: str, default: float) -> float:
    return _number(
        env, name, default, float, lambda v: 0 < v <= 1, "a fraction: write e.g. 0.75 (75 %)."
    )


def positive(env: Mapping[str, str], name: str, default: float, *, whole: bool = False) -> float:
    """A positive number of seconds (or, ``whole``, a positive integer count)."""
    kind = "a whole number above 0, e.g. 8" if whole else "a number of seconds above 0"
    parse: Callable[[str], float] = (lambda t: float(int(t))) if whole else float
    return _number(env, name, default, parse, lambda v: 0 < v < float("inf"), f"{kind}.")


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


def count(env: Mapping[str, str], name: str, default: int, *, least: int) -> int:
    """A whole number of at least ``least``."""
    says = f"a whole number of at least {least}: write e.g. {default}."
    return _number(env, name, default, int, lambda v: v >= least, says)


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


def networks(env: Mapping[str, str], name: str) -> tuple[str, ...]:
    """IP addresses and CIDR networks, comma-separated, in their canonical spelling.

    Checked here because uvicorn would take a malformed entry for a literal host
    name and silently trust nothing (or a unix socket path) instead.
    """
    found = []
    for entry in (e.strip() for e in env.get(name, "").split(",") if e.strip()):
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
