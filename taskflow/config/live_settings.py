"""Live subscription settings (``TASKFLOW_LIVE_*``, README "Configuration", docs/live.md)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from taskflow import errors


@dataclass(frozen=True)
class LiveSettings:
    """Caps and timings of GraphQL subscriptions over ``graphql-transport-ws``: subscriptions
    one connection may hold, sockets one principal may hold open on one process, seconds
    for ``connection_init``, of silence before a socket is closed, between server pings and
    between re-checks of the sockets' tokens, changes waiting for one slow subscriber before
    it is dropped, and timeline lines a resuming subscription may replay."""

    max_subscriptions: int = 20
    max_connections: int = 10
    init_timeout: float = 10.0
    idle_timeout: float = 300.0
    ping_interval: float = 30.0
    recheck_interval: float = 5.0
    max_queued: int = 256
    resume_window: int = 10_000


def load(
    env: Mapping[str, str], seconds: Callable[[Mapping[str, str], str, float], float]
) -> LiveSettings:
    """The settings from ``env``, read with ``config``'s parser of positive numbers."""

    found: dict[str, float] = {}
    for name, default in vars(LiveSettings()).items():
        variable = f"TASKFLOW_LIVE_{name.upper()}"
        value = seconds(env, variable, float(default))
        if isinstance(default, int) and value != int(value):
            raise errors.ConfigError(f"{variable} must be a whole number, e.g. {default}.")
        found[name] = int(value) if isinstance(default, int) else value
    return LiveSettings(**found)  # type: ignore[arg-type]
