"""The soak test's clients: the whole mix of mutations, many on the same few runs and slots.

Each client loops until the deadline, picking an action at random (seeded): a
lead reads a run of the shared pool and acts on what it saw (claim, assign,
move, cancel with the version seen), finance people claim, claim next,
release and complete, the application starts runs, raises events and updates
subjects. Every answer is tallied: HTTP status, top-level error codes, and the
payload's ``__typename``.
"""

from __future__ import annotations

import asyncio
import itertools
import random
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import httpx

FINANCE = ("fiona", "frank", "sam")
LEAD = "leah"
APP = "app"

RUN = """query($id: ID!) { run(id: $id) { id version state status
  subject { externalId } slots { id name version status holder } } }"""
START = """mutation($input: StartRunInput!) { startRun(input: $input) { __typename
  ... on StartRunSuccess { run { id } } } }"""
CLAIM = """mutation($input: ClaimInput!) { claim(input: $input) { __typename } }"""
CLAIM_NEXT = """mutation($input: ClaimNextInput!) { claimNext(input: $input) { __typename } }"""
RELEASE = """mutation($input: ReleaseInput!) { release(input: $input) { __typename } }"""
ASSIGN = """mutation($input: AssignInput!) { assign(input: $input) { __typename } }"""
COMPLETE = """mutation($input: CompleteInput!) { complete(input: $input) { __typename } }"""
RAISE = """mutation($input: RaiseEventInput!) { raiseEvent(input: $input) { __typename } }"""
UPDATE = """mutation($input: UpdateSubjectInput!) { updateSubject(input: $input) { __typename } }"""
MOVE = """mutation($input: MoveInput!) { move(input: $input) { __typename } }"""
CANCEL = """mutation($input: CancelRunInput!) { cancelRun(input: $input) { __typename } }"""


@dataclass
class Tally:
    """What the clients saw."""

    calls: Counter[str] = field(default_factory=Counter)
    answers: Counter[str] = field(default_factory=Counter)
    statuses: Counter[int] = field(default_factory=Counter)
    errors: Counter[str] = field(default_factory=Counter)
    samples: list[str] = field(default_factory=list)

    def record(self, action: str, response: httpx.Response, field_name: str | None) -> Any:
        self.calls[action] += 1
        self.statuses[response.status_code] += 1
        try:
            body = response.json()
        except ValueError:
            body = {}
        for error in body.get("errors") or []:
            code = (error.get("extensions") or {}).get("code", "NO_CODE")
            self.errors[code] += 1
            if len(self.samples) < 20:
                self.samples.append(f"{action}: {code}: {error.get('message')}")
        if response.status_code >= 500 and len(self.samples) < 20:
            self.samples.append(f"{action}: HTTP {response.status_code}: {response.text[:300]}")
        data = body.get("data") or {}
        answer = data.get(field_name) if field_name else None
        if isinstance(answer, dict) and "__typename" in answer:
            self.answers[f"{action}:{answer['__typename']}"] += 1
        return data


@dataclass
class Pool:
    """The live runs the clients share (global ids), kept small so they collide."""

    size: int
    runs: list[str] = field(default_factory=list)
    started: int = 0


class Client:
    """One simulated frontend or application, with everyone's tokens."""

    def __init__(
        self, http: httpx.AsyncClient, tokens: dict[str, str], pool: Pool, tally: Tally, seed: int
    ) -> None:
        self.http, self.tokens, self.pool, self.tally = http, tokens, pool, tally
        self.rng = random.Random(seed)

    async def call(
        self, action: str, who: str, query: str, variables: dict[str, Any], name: str | None
    ) -> Any:
        response = await self.http.post(
            "/graphql",
            json={"query": query, "variables": variables},
            headers={"Authorization": f"Bearer {self.tokens[who]}"},
        )
        return self.tally.record(action, response, name)

    async def run_view(self) -> dict[str, Any] | None:
        if not self.pool.runs:
            return None
        run_id = self.rng.choice(self.pool.runs)
        data = await self.call("read", LEAD, RUN, {"id": run_id}, None)
        run = data.get("run")
        if run is None or run["status"] != "ACTIVE":
            if run_id in self.pool.runs:
                self.pool.runs.remove(run_id)
            return None
        return dict(run)

    def live_slot(self, run: dict[str, Any]) -> dict[str, Any] | None:
        live = [s for s in run["slots"] if s["status"] in ("OPEN", "CLAIMED")]
        return self.rng.choice(live) if live else None

    # -- the mix ---------------------------------------------------------------------------

    async def start(self) -> None:
        self.pool.started += 1
        ref = f"J-{self.pool.started}-{self.rng.randrange(10**6)}"
        variables = {
            "input": {
                "workflow": "soak",
                "subject": {"type": "job", "externalId": ref, "attributes": {"ref": ref}},
            }
        }
        data = await self.call("startRun", APP, START, variables, "startRun")
        run = (data.get("startRun") or {}).get("run")
        if run:
            self.pool.runs.append(run["id"])

    async def claim(self) -> None:
        run = await self.run_view()
        slot = self.live_slot(run) if run else None
        if slot is None:
            return
        version = slot["version"] if self.rng.random() < 0.5 else None
        variables = {"input": {"slotId": slot["id"], "expectedVersion": version}}
        await self.call("claim", self.rng.choice(FINANCE), CLAIM, variables, "claim")

    async def claim_next(self) -> None:
        variables = {"input": {"filter": {"workflow": "soak"}}}
        await self.call("claimNext", self.rng.choice(FINANCE), CLAIM_NEXT, variables, "claimNext")

    async def release(self) -> None:
        run = await self.run_view()
        slot = self.live_slot(run) if run else None
        if slot is None:
            return
        who = slot["holder"] if slot["holder"] in FINANCE else self.rng.choice(FINANCE)
        variables = {"input": {"slotId": slot["id"], "reason": "soak"}}
        await self.call("release", who, RELEASE, variables, "release")

    async def assign(self) -> None:
        run = await self.run_view()
        slot = self.live_slot(run) if run else None
        if slot is None:
            return
        variables = {
            "input": {
                "slotId": slot["id"],
                "to": self.rng.choice(FINANCE),
                "expectedVersion": slot["version"],
            }
        }
        await self.call("assign", LEAD, ASSIGN, variables, "assign")

    async def complete(self) -> None:
        run = await self.run_view()
        slot = self.live_slot(run) if run else None
        if slot is None:
            return
        who = slot["holder"] if slot["holder"] in FINANCE else self.rng.choice(FINANCE)
        variables = {"input": {"slotId": slot["id"], "payload": {"note": "done"}}}
        await self.call("complete", who, COMPLETE, variables, "complete")

    async def raise_event(self) -> None:
        if not self.pool.runs:
            return
        variables = {
            "input": {
                "event": self.rng.choice(("done", "checked")),
                "target": {"runId": self.rng.choice(self.pool.runs)},
                "payload": {"note": "by the app"},
            }
        }
        await self.call("raiseEvent", APP, RAISE, variables, "raiseEvent")

    async def update_subject(self) -> None:
        run = await self.run_view()
        if run is None:
            return
        ref = run["subject"]["externalId"]
        variables = {
            "input": {
                "type": "job",
                "externalId": ref,
                "attributes": {"ref": ref, "touched": self.rng.randrange(1000)},
            }
        }
        await self.call("updateSubject", APP, UPDATE, variables, "updateSubject")

    async def move(self) -> None:
        run = await self.run_view()
        if run is None:
            return
        await asyncio.sleep(self.rng.random() * 0.2)  # a card looked at a moment ago
        name = self.rng.choice(("skip", "park", "resume"))
        variables = {"input": {"runId": run["id"], "move": name, "expectedVersion": run["version"]}}
        await self.call("move", LEAD, MOVE, variables, "move")

    async def cancel_run(self) -> None:
        run = await self.run_view()
        if run is None:
            return
        variables = {
            "input": {"runId": run["id"], "reason": "soak", "expectedVersion": run["version"]}
        }
        await self.call("cancelRun", LEAD, CANCEL, variables, "cancelRun")

    async def loop(self, deadline: float) -> None:
        actions = [
            (self.start, 0.0),  # weighted by how empty the pool is
            (self.claim, 6),
            (self.claim_next, 4),
            (self.release, 3),
            (self.assign, 3),
            (self.complete, 1.5),
            (self.raise_event, 0.7),
            (self.update_subject, 2),
            (self.move, 2),
            (self.cancel_run, 0.3),
        ]
        while time.monotonic() < deadline:
            weights = [w for _, w in actions]
            weights[0] = max(0.2, (self.pool.size - len(self.pool.runs)) * 2.0)
            (action, _) = self.rng.choices(actions, weights)[0]
            await action()


class RoundRobin(httpx.AsyncBaseTransport):
    """A load balancer in front of several API processes on this machine: each request goes
    to the next port; a process that refuses the connection (stopped) is passed over for the
    next, as a balancer's health check would; a request cut mid-way (its process killed)
    is answered 502, as a balancer does, and counted in ``cut``: the client cannot know
    whether it was written."""

    def __init__(self, ports: Sequence[int]) -> None:
        self.ports = list(ports)
        self._next = itertools.cycle(range(len(self.ports)))
        self._inner = httpx.AsyncHTTPTransport()
        self.cut = 0
        self.passed_over = 0

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        first = next(self._next)
        # Every process once, from this request's turn on (the turns of requests sent
        # meanwhile must not send it back to the one that refused it).
        for turn in range(first, first + len(self.ports)):
            request.url = request.url.copy_with(port=self.ports[turn % len(self.ports)])
            try:
                response = await self._inner.handle_async_request(request)
                # The body is read here: a process killed after its headers and before its
                # body cuts the request as surely as one killed before answering.
                await response.aread()
                return response
            except httpx.ConnectError:
                self.passed_over += 1
            except (httpx.ReadError, httpx.RemoteProtocolError, httpx.WriteError):
                self.cut += 1
                return httpx.Response(502, json={"detail": "upstream connection cut"})
        raise httpx.ConnectError(f"no API process answers on ports {self.ports}")

    async def aclose(self) -> None:
        await self._inner.aclose()


async def load(
    base_url: str,
    tokens: dict[str, str],
    *,
    seconds: float,
    clients: int,
    pool_size: int,
    transport: httpx.AsyncBaseTransport | None = None,
) -> Tally:
    """Run ``clients`` clients for ``seconds`` against the server at ``base_url`` (through
    ``transport``, e.g. a :class:`RoundRobin` of several servers, when given)."""
    tally, pool = Tally(), Pool(pool_size)
    deadline = time.monotonic() + seconds
    async with httpx.AsyncClient(base_url=base_url, timeout=30, transport=transport) as http:
        await asyncio.gather(
            *(Client(http, tokens, pool, tally, seed).loop(deadline) for seed in range(clients))
        )
    return tally
