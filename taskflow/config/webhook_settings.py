"""Webhook delivery settings (``TASKFLOW_WEBHOOK_*``, README "Configuration", docs/delivery.md)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import timedelta

from taskflow import errors


@dataclass(frozen=True)
class WebhookSettings:
    """Where endpoints may point, and how the worker delivers to them."""

    #: Endpoints may resolve to loopback, link-local and private addresses.
    allow_private: bool = False
    #: Endpoints may resolve to loopback addresses (this machine): by default in dev only.
    allow_loopback: bool = False
    #: Endpoints may use plain http.
    allow_http: bool = False
    #: A delivery still failing this long after its event is ``dead``.
    horizon: timedelta = timedelta(days=3)
    #: An endpoint whose every attempt failed for this long is disabled (needs attention).
    disable_after: timedelta = timedelta(days=1)
    #: Seconds an attempt may take (connect, send, answer).
    timeout: float = 10.0
    #: The first retry's wait and the longest one, in seconds.
    backoff_base: float = 5.0
    backoff_max: float = 3600.0
    #: Deliveries one worker sends at once.
    concurrency: int = 32


def load(
    env: Mapping[str, str],
    flag: Callable[[Mapping[str, str], str, bool], bool],
    duration: Callable[[Mapping[str, str], str, timedelta], timedelta],
    seconds: Callable[[Mapping[str, str], str, float], float],
    *,
    dev: bool = False,
) -> WebhookSettings:
    """The settings from ``env``, read with ``config``'s parsers (CONFIG_ERROR naming the
    variable when one is wrong)."""
    concurrency = seconds(env, "TASKFLOW_WEBHOOK_CONCURRENCY", 32)
    if concurrency != int(concurrency):
        raise errors.ConfigError("TASKFLOW_WEBHOOK_CONCURRENCY must be a whole number, e.g. 32.")
    private = flag(env, "TASKFLOW_WEBHOOK_ALLOW_PRIVATE", False)
    return WebhookSettings(
        allow_private=private,
        allow_loopback=private or flag(env, "TASKFLOW_WEBHOOK_ALLOW_LOOPBACK", dev),
        allow_http=flag(env, "TASKFLOW_WEBHOOK_ALLOW_HTTP", False),
        horizon=duration(env, "TASKFLOW_WEBHOOK_HORIZON", timedelta(days=3)),
        disable_after=duration(env, "TASKFLOW_WEBHOOK_DISABLE_AFTER", timedelta(days=1)),
        timeout=seconds(env, "TASKFLOW_WEBHOOK_TIMEOUT", 10.0),
        backoff_base=seconds(env, "TASKFLOW_WEBHOOK_BACKOFF_BASE", 5.0),
        backoff_max=seconds(env, "TASKFLOW_WEBHOOK_BACKOFF_MAX", 3600.0),
        concurrency=int(concurrency),
    )
