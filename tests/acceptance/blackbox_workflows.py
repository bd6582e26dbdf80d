"""Workflows with automatic steps for the black-box test (``test_steps_blackbox.py``).

The test copies this file into a temporary folder and names it in
``TASKFLOW_WORKFLOWS``: ``taskflow serve`` and every ``taskflow worker`` load it
from there, as a user's own workflow file. The actions are defined here too.

Every action reads what to do from the subject. ``plan`` holds one word per
attempt (the last one repeated): ``ok`` returns, ``boom`` raises :class:`Flaky`
(transient), ``refused`` :class:`Refused` (final), ``fraud`` :class:`Fraud` (a
kind of Refused), ``slow`` sleeps past the attempt's timeout. ``dir`` is a folder
the actions write to, so the test sees side effects across processes: ``mended``
there makes the parked action succeed, ``once.txt`` gets one line per call of a
``steps.once`` function, ``started-<state>`` one line per start.
"""

from __future__ import annotations

import asyncio
from datetime import timedelta
from pathlib import Path
from typing import Any

from taskflow import (
    Exponential,
    Fixed,
    Linear,
    Move,
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


class Flaky(Exception):
    """The other side failed this time: worth another attempt."""


class Refused(Exception):
    """The other side said no: another attempt will not help."""


class Fraud(Refused):
    """A refusal for suspected fraud: a person of another desk looks at it."""


def _word(ctx: tf_steps.StepContext) -> str:
    plan = list(ctx.subject.get("plan") or ["ok"])
    return str(plan[min(ctx.attempt, len(plan)) - 1])


def _folder(ctx: tf_steps.StepContext) -> Path:
    return Path(str(ctx.subject["dir"]))


def _append(path: Path, line: str) -> None:
    with path.open("a") as out:
        out.write(line + "\n")


async def pay(ctx: tf_steps.StepContext) -> dict[str, Any]:
    """Post a payment; behaves as the subject's plan says for this attempt."""
    await asyncio.to_thread(_append, _folder(ctx) / f"started-{ctx.state}", str(ctx.attempt))
    await asyncio.sleep(float(ctx.subject.get("delay", 0)))
    word = _word(ctx)
    if word == "boom":
        raise Flaky(f"the payment service answered 503 on attempt {ctx.attempt}")
    if word == "refused":
        raise Refused("the bank refused the transfer")
    if word == "fraud":
        raise Fraud("the bank suspects fraud")
    if word == "slow":
        await asyncio.sleep(30)
    return {
        "payment_id": f"PAY-{ctx.subject['ref']}",
        "amount": ctx.subject.get("amount", 0),
        "attempt": ctx.attempt,
    }


async def sync_ledger(ctx: tf_steps.StepContext) -> dict[str, Any]:
    """Fails until an operator mends the ledger (``mended`` in the folder)."""
    if not (_folder(ctx) / "mended").exists():
        raise Flaky("the ledger is read-only")
    return {"synced": True}


async def _ticket(ctx: tf_steps.StepContext, mark: str) -> Any:
    """A ticket opened through ``steps.once`` (``mark`` written to once.txt each time one is
    really opened)."""

    def make() -> str:
        _append(_folder(ctx) / "once.txt", mark)
        return f"TICKET-{ctx.subject['ref']}"

    return await tf_steps.once("ticket", make)


async def open_ticket(ctx: tf_steps.StepContext) -> dict[str, Any]:
    """Open a ticket once per run (recorded), then fail or not as planned."""
    ticket = await _ticket(ctx, ctx.run_id)
    if _word(ctx) == "boom":
        raise Flaky("the ticket system timed out after opening the ticket")
    return {"ticket": ticket, "attempt": ctx.attempt}


async def note_crm(ctx: tf_steps.StepContext) -> dict[str, Any]:
    """Tell the CRM, slowly (the state's slot does not wait for it)."""
    await asyncio.sleep(float(ctx.subject.get("delay", 2)))
    return {"noted": ctx.subject["ref"]}


async def follow_up(ctx: tf_steps.StepContext) -> dict[str, Any]:
    """Send the customer a follow-up (counted in the folder)."""
    await asyncio.to_thread(_append, _folder(ctx) / "followups.txt", ctx.now.isoformat())
    return {"sent": True}


FAST = timedelta(seconds=1)
_FINANCE = who.role("finance")


def _check(label: str) -> Slot:
    return Slot("check", label=label, candidates=_FINANCE)


class BoxFixed(Workflow):
    """Pay with a fixed wait between attempts; a large amount goes to a second look."""

    name = "box-fixed"
    tracks = "order"

    pay = State(
        initial=True,
        action=pay,
        retry=Fixed(wait=FAST, max_attempts=3, final=[Refused]),
        on_success=[Route("large", when=result.pay.amount > 100), Route("paid")],
        on_error=[OnError("fraud_desk", errors=[Fraud]), OnError("refused_desk", errors=[Refused])],
    )
    large = State(
        slots=[_check("Look at {result.pay.payment_id} of {result.pay.amount}")], then="paid"
    )
    fraud_desk = State(slots=[_check("Fraud? {subject.ref}")], then="paid")
    refused_desk = State(slots=[_check("Refused: {subject.ref}")], then="paid")
    paid = State(terminal=True)


def _workflow(name: str, doc: str, **states: State) -> type[Workflow]:
    """A workflow class named ``name`` tracking orders, with ``states`` (the first initial)."""
    title = "".join(part.title() for part in name.split("-"))
    body = {"__doc__": doc, "__module__": __name__, "name": name, "tracks": "order", **states}
    return type(title, (Workflow,), body)


def _paying(name: str, doc: str, retry: Any) -> type[Workflow]:
    """A workflow that pays under ``retry``: paid, or after the last failure a person pays."""
    return _workflow(
        name,
        doc,
        pay=State(
            initial=True,
            action=pay,
            retry=retry,
            on_success=[Route("paid")],
            on_error=[OnError("manual")],
        ),
        manual=State(slots=[_check("Pay {subject.ref} by hand")], then="paid"),
        paid=State(terminal=True),
    )


BoxExponential = _paying(
    "box-exponential",
    "Pay with exponentially growing waits (1 s, then 2 s).",
    Exponential(first=FAST, factor=2, max_wait=timedelta(seconds=2), max_attempts=3),
)
BoxTimeout = _paying(
    "box-timeout",
    "Pay with a per-attempt timeout of one second.",
    Fixed(wait=FAST, max_attempts=2, timeout=FAST),
)
BoxLinear = _paying(
    "box-linear",
    "Pay with linearly growing waits (1 s, then 2 s).",
    Linear(first=FAST, step=FAST, max_attempts=3),
)
BoxTransient = _paying(
    "box-transient",
    "Only Flaky is retried; anything else goes to a person at once.",
    Fixed(wait=FAST, max_attempts=3, transient=[Flaky]),
)


def _one_action(
    name: str, doc: str, action: Any, *, state: str, done: str, attempts: int
) -> type[Workflow]:
    """A workflow of one action retried up to ``attempts`` times, then ``done``; with no
    ``on_error`` route, its last failure parks it."""
    acting = State(
        initial=True,
        action=action,
        retry=Fixed(wait=FAST, max_attempts=attempts),
        on_success=[done],
    )
    return _workflow(name, doc, **{state: acting, done: State(terminal=True)})


BoxParked = _one_action(
    "box-parked",
    "Sync the ledger, twice at most, with nowhere to go on error: it parks.",
    sync_ledger,
    state="sync",
    done="synced",
    attempts=2,
)
BoxOnce = _one_action(
    "box-once",
    "Open a ticket once per run though the action is retried.",
    open_ticket,
    state="opening",
    done="opened",
    attempts=3,
)


BoxBeside = _workflow(
    "box-beside",
    "Ask a person and, beside, tell the CRM; follow up every 2 s until 5 s.",
    asking=State(
        initial=True,
        slots=[Slot("answer", candidates=_FINANCE)],
        action=note_crm,
        every=[every(real.minutes(2 / 60), action=follow_up, until=real.minutes(5 / 60))],
        then=[Route("done")],
    ),
    done=State(terminal=True),
)


class _Unprintable(Exception):
    def __str__(self) -> str:
        raise RuntimeError("no text for this error")


async def odd(ctx: tf_steps.StepContext) -> Any:
    """Misbehaves as the subject's ``odd`` says."""
    kind = str(ctx.subject.get("odd"))
    if kind == "set":
        return {"ids": {1, 2}}
    if kind == "none":
        return None
    if kind == "unprintable":
        raise _Unprintable()
    if kind == "exit":
        raise SystemExit(3)
    if kind == "cancelled":
        raise asyncio.CancelledError()
    if kind == "huge":
        return {"blob": "x" * 3_000_000}
    if kind == "long":
        raise Flaky("y" * 50_000)
    if kind == "nan":
        return {"rate": float("nan")}
    if kind == "nul":
        return {"text": "a\x00b"}
    if kind == "nul-error":
        raise Flaky("bad byte \x00 here")
    if kind == "once-set":
        await tf_steps.once("ids", lambda: {1, 2})
    if kind == "once-nan":
        await tf_steps.once("rate", lambda: float("nan"))
    if kind == "once-long-name":
        await tf_steps.once("n" * 500, lambda: 1)
    return {"ok": kind}


BoxOdd = _workflow(
    "box-odd",
    "An action that misbehaves; one attempt, nowhere to go on error: it parks.",
    odd=State(initial=True, action=odd, on_success=["done"]),
    done=State(terminal=True),
)


BoxUnmatched = _workflow(
    "box-unmatched",
    "Only large payments have a route; a person may skip the rest.",
    pay=State(
        initial=True,
        action=pay,
        on_success=[Route("large", when=result.pay.amount > 100)],
        moves=[Move("skip", to="paid", by=who.role("finance"))],
    ),
    large=State(slots=[_check("Large: {result.pay.amount}")], then="paid"),
    paid=State(terminal=True),
)


BoxEntry = _workflow(
    "box-entry",
    "An action on entry (planned by the subject) beside a slot, and a timeout's action.",
    asking=State(
        initial=True,
        slots=[Slot("answer", candidates=_FINANCE)],
        action=pay,
        retry=Fixed(wait=FAST, max_attempts=2),
        timeouts=[timeout(real.minutes(1 / 60), action=follow_up)],
        then=[Route("done")],
    ),
    done=State(terminal=True),
)


async def nag(ctx: tf_steps.StepContext) -> dict[str, Any]:
    """A follow-up that fails on the second firing of the first visit (counted in the folder)."""
    path = _folder(ctx) / "nags.txt"
    await asyncio.to_thread(_append, path, ctx.idempotency_key)
    count = len(path.read_text().splitlines())
    if count == 2:
        raise Flaky("the mail server said 451")
    return {"nag": count}


async def greet(ctx: tf_steps.StepContext) -> dict[str, Any]:
    """Open a ticket once per run, however often the state is entered."""
    return {"ticket": await _ticket(ctx, ctx.idempotency_key)}


BoxLoop = _workflow(
    "box-loop",
    "Wait for a reply, nagging every second until 3.5 s; an admin may send it round again.",
    waiting=State(
        initial=True,
        slots=[Slot("reply", candidates=_FINANCE)],
        action=greet,
        every=[every(real.minutes(1 / 60), action=nag, until=real.minutes(3.5 / 60))],
        then=[Route("done")],
        moves=[Move("aside", to="aside", by=who.role("lead"))],
    ),
    aside=State(slots=[Slot("look", candidates=_FINANCE)], then=[Route("waiting")]),
    done=State(terminal=True),
)
