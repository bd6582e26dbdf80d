"""Workflows with automatic steps for the tests, and their actions.

The actions stand for calls to other systems. What each attempt does is read
from the subject (``plan``: one word per attempt, the last repeated): ``ok``
returns, ``boom`` raises a transient error, ``declined`` a final one, ``slow``
sleeps past the attempt's timeout, ``hang`` writes the file named by the subject's
``marker`` (one line per start) and waits a minute (a worker is killed meanwhile).
``CALLS`` counts the side effects ``steps.once`` must not repeat.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from datetime import timedelta
from pathlib import Path
from typing import Any

from taskflow import (
    Fixed,
    OnError,
    Route,
    Slot,
    State,
    Workflow,
    every,
    real,
    result,
    timeout,
    who,
)
from taskflow import steps as tf_steps

#: Side effects made, by name (``ticket:<run>``, ``followup:<run>``...).
CALLS: Counter[str] = Counter()


class Declined(Exception):
    """The other side said no: retrying will not help."""


class Flaky(Exception):
    """The other side failed this time."""


def _word(ctx: tf_steps.StepContext) -> str:
    plan = list(ctx.subject.get("plan") or ["ok"])
    return str(plan[min(ctx.attempt, len(plan)) - 1])


def _mark(path: Path, ctx: tf_steps.StepContext) -> None:
    with path.open("a") as marker:
        marker.write(f"attempt {ctx.attempt} key {ctx.idempotency_key}\n")


async def charge(ctx: tf_steps.StepContext) -> dict[str, Any]:
    """Charge the order: behaves as the subject's plan says for this attempt."""
    word = _word(ctx)
    if word == "boom":
        raise Flaky(f"the payment service failed on attempt {ctx.attempt}")
    if word == "declined":
        raise Declined("the card was declined")
    if word == "slow":
        await asyncio.sleep(5)
    if word == "hang":
        await asyncio.to_thread(_mark, Path(str(ctx.subject["marker"])), ctx)
        await asyncio.sleep(60)
    return {"amount": ctx.subject.get("amount", 0), "key": ctx.idempotency_key}


async def open_ticket(ctx: tf_steps.StepContext) -> dict[str, Any]:
    """Open a ticket elsewhere once per run, then charge as planned."""

    def make() -> str:
        CALLS[f"ticket:{ctx.run_id}"] += 1
        return f"T-{CALLS[f'ticket:{ctx.run_id}']}-{ctx.run_id[:8]}"

    ticket = await tf_steps.once("ticket", make)
    if _word(ctx) == "boom":
        raise Flaky("the ticket system timed out after opening the ticket")
    return {"ticket": ticket}


async def follow_up(ctx: tf_steps.StepContext) -> dict[str, Any]:
    """Send a follow-up (counted)."""
    CALLS[f"followup:{ctx.run_id}"] += 1
    return {"sent": CALLS[f"followup:{ctx.run_id}"]}


async def remind_app(ctx: tf_steps.StepContext) -> str:
    """A timeout's action (counted)."""
    CALLS[f"timeout:{ctx.run_id}"] += 1
    return "reminded"


_CHARGE = "tests.integration.step_workflows:charge"


class Charging(Workflow):
    """Charge an order: retried twice a minute apart; declined cards go to finance."""

    name = "charging"
    tracks = "order"

    charge = State(
        initial=True,
        action=_CHARGE,
        retry=Fixed(wait=timedelta(minutes=1), max_attempts=3, final=[Declined]),
        on_success=[Route("large", when=result.charge.amount > 100), Route("charged")],
        on_error=[OnError("declined", errors=[Declined])],
    )
    large = State(terminal=True)
    charged = State(terminal=True)
    declined = State(
        slots=[Slot("resolve", candidates=who.role("finance"))],
        then=[Route("charged")],
    )


class Ticketing(Workflow):
    """Open a ticket (once per run), retried; then wait for a reply, following up weekly."""

    name = "ticketing"
    tracks = "order"

    opening = State(
        initial=True,
        action=open_ticket,
        retry=Fixed(wait=timedelta(minutes=5), max_attempts=2),
        on_success=["waiting"],
        on_error=[OnError("stuck")],
    )
    waiting = State(
        slots=[Slot("reply", candidates=who.role("finance"))],
        every=[every(real.days(7), action=follow_up, until=real.days(28))],
        timeouts=[timeout(real.hours(1), action=remind_app)],
        then=[Route("closed")],
        moves=[],
    )
    stuck = State(slots=[Slot("unstick", candidates=who.role("finance"))], then=["closed"])
    closed = State(terminal=True)


def _broken_hook(ctx: Any) -> None:
    raise RuntimeError("the enter hook is broken")


class Hooked(Workflow):
    """An action whose success leads to a state whose enter hook fails."""

    name = "hooked"
    tracks = "order"

    work = State(initial=True, action=_CHARGE, on_success=["broken"])
    broken = State(
        on_enter=_broken_hook,
        slots=[Slot("look", candidates=who.role("finance"))],
        then=[Route("done")],
    )
    done = State(terminal=True)


class Noting(Workflow):
    """A state that asks a person and, beside, tells another system (not waited for)."""

    name = "noting"
    tracks = "order"

    asking = State(
        initial=True,
        slots=[Slot("answer", candidates=who.role("finance"))],
        action=_CHARGE,
        retry=Fixed(wait=timedelta(minutes=1), max_attempts=2),
        then=[Route("done")],
    )
    done = State(terminal=True)


class Quick(Workflow):
    """Charging with waits of a second, for real processes on the real clock."""

    name = "quick"
    tracks = "order"

    charge = State(
        initial=True,
        action=_CHARGE,
        retry=Fixed(wait=timedelta(seconds=1), max_attempts=2, final=[Declined]),
        on_success=[Route("charged")],
        on_error=[OnError("declined", errors=[Declined])],
    )
    charged = State(terminal=True)
    declined = State(slots=[Slot("resolve", candidates=who.role("finance"))], then="charged")


#: What the enter hook of ``welcoming`` got back from ``steps.once``, in order.
SEEN: list[Any] = []


def _badge_hook(ctx: Any) -> None:
    """Give the visitor a badge once per run (in a hook: ``once`` returns the value)."""

    def make() -> str:
        CALLS[f"badge:{ctx.run_id}"] += 1
        return f"B-{CALLS[f'badge:{ctx.run_id}']}"

    SEEN.append(tf_steps.once("badge", make))


class Welcoming(Workflow):
    """A state whose enter hook records a value once per run, entered again by operators."""

    name = "welcoming"
    tracks = "order"

    arriving = State(
        initial=True, slots=[Slot("arrive", candidates=who.role("finance"))], then=["greeting"]
    )
    greeting = State(
        on_enter=_badge_hook,
        slots=[Slot("greet", candidates=who.role("finance"))],
        then=[Route("done")],
    )
    done = State(terminal=True)


#: Polling's recurring work: a follow-up every hour while its action has not ended.
_HOURLY = every(real.hours(1), action=follow_up, until=real.days(1))


class Polling(Workflow):
    """An automatic state that also follows up every hour while its action has not ended."""

    name, tracks = "polling", "order"
    polling = State(initial=True, action=_CHARGE, every=[_HOURLY], on_success=["done"])
    done = State(terminal=True)
