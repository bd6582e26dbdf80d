"""The console's board per workflow (lanes by state, each card's legal moves), a run's
page with its timeline, and the move form they share.

Read through the same use cases as the GraphQL ``board``, ``run`` and ``Run.timeline``
(``service/slots/views.py``): whoever the API shows nothing shows nothing here (an empty
board; 404 for a run, the same as for no run). A move posts to ``run_service.move``, the
``move`` mutation's use case, with the run's version as the page showed it.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any
from urllib.parse import quote

from litestar import Request, get, post
from litestar.datastructures import State
from litestar.params import FromPath
from litestar.response import Redirect, Response

from taskflow import errors
from taskflow.api import link_pages
from taskflow.api.console import pages
from taskflow.api.graphql.common import relay
from taskflow.core.access.principals import Principal
from taskflow.core.definition import fields as fl
from taskflow.core.links import links as link_core
from taskflow.core.runs.model import RunView
from taskflow.service.common.container import Services
from taskflow.service.runs import runs as run_service
from taskflow.service.slots import views

#: Cards per board page and lines per timeline page (the use cases' own cap).
PAGE_SIZE = views.MAX_FIRST
BOARDS = f"{pages.PATH}/boards"
RUNS = f"{pages.PATH}/runs"


def board_url(workflow: str) -> str:
    return f"{BOARDS}/{quote(workflow, safe='')}"


def _board_cursor(text: str | None) -> tuple[datetime, str] | None:
    if not text:
        return None
    started, run_id = relay.decode_typed(text, "datetime", "uuid")
    return (started, run_id)


def lanes(services: Services, workflow: str, cards: list[views.Card], ended: bool) -> list[Any]:
    """(state name, label, cards) in the definition's order of states; terminal states only
    when ended runs are shown; a state no longer in the definition (an older version's)
    after the rest."""
    definition = services.catalog.get(workflow)
    order = [s for s in definition.states if ended or not s.terminal]
    by_state: dict[str, list[views.Card]] = {}
    for card in cards:
        by_state.setdefault(card.run.view.state, []).append(card)
    found = [(s.name, s.label or s.name, by_state.pop(s.name, [])) for s in order]
    return found + [(name, name, rest) for name, rest in sorted(by_state.items())]


def move_fields(services: Services, run: RunView) -> dict[str, tuple[fl.Field, ...]]:
    """The input each of the run's current moves takes (its form's fields)."""
    state = run_service.state_for_reading(services, run)
    return {m.name: tuple(m.fields) for m in state.moves} if state is not None else {}


@get(BOARDS, include_in_schema=False)
async def boards(state: State, request: Request[Any, Any, Any]) -> Response[str]:
    """The workflows, each a link to its board."""
    services, me = await pages.signed_in(state, request)
    if me is None:
        return pages.sign_in_page()
    names = sorted(services.catalog.names())
    return pages.html("boards.html", 200, me=me, names=names, board_url=board_url)


@get(f"{BOARDS}/{{workflow:str}}", include_in_schema=False)
async def board(
    state: State, request: Request[Any, Any, Any], workflow: FromPath[str]
) -> Response[str]:
    """A workflow's board: one card per run you may see, in lanes by state, a page at a time."""
    services, me = await pages.signed_in(state, request)
    if me is None:
        return pages.sign_in_page()
    ended = request.query_params.get("ended") == "1"
    after = request.query_params.get("after")
    try:
        cards, total, more = await views.board(
            services,
            me,
            workflow,
            first=PAGE_SIZE,
            after=_board_cursor(after),
            include_ended=ended,
        )
    except errors.TaskflowError as refused:
        return pages.refusal_page(me, refused, BOARDS)
    last = cards[-1].run if cards else None
    following = (
        relay.encode_cursor(last.started_at.isoformat(), last.view.id) if more and last else None
    )
    moves = {c.run.view.id: views.moves_for(services, me, c.run, c.slots) for c in cards}
    fields = {c.run.view.id: move_fields(services, c.run.view) for c in cards}
    return pages.html(
        "board.html",
        200,
        me=me,
        workflow=workflow,
        lanes=lanes(services, workflow, cards, ended),
        moves=moves,
        fields=fields,
        total=total,
        shown=len(cards),
        ended=ended,
        paged=bool(after),
        following=following,
        pager_base=f"{board_url(workflow)}?ended={int(ended)}&",
        here=board_url(workflow),
    )


@get(f"{RUNS}/{{run_id:str}}", include_in_schema=False)
async def run_page(
    state: State, request: Request[Any, Any, Any], run_id: FromPath[str]
) -> Response[str]:
    """A run: its state, its slots, its moves and its timeline, a page at a time."""
    services, me = await pages.signed_in(state, request)
    if me is None:
        return pages.sign_in_page()
    return await _run_page(services, me, run_id, request.query_params.get("after"))


async def _run_page(
    services: Services,
    me: Principal,
    run_id: str,
    after: str | None,
    status: int = 200,
    refusal: errors.TaskflowError | None = None,
) -> Response[str]:
    try:
        run, slots = await views.run_detail(services, me, run_id)
        after_id = int(after) if after and after.isdigit() else 0
        lines, total, more = await views.timeline(
            services, me, run_id, kinds=None, first=PAGE_SIZE, after_id=after_id
        )
    except errors.TaskflowError as refused:
        return pages.refusal_page(me, refused, pages.PATH)
    return pages.html(
        "run.html",
        status,
        me=me,
        run=run,
        slots=sorted(slots, key=lambda s: (s.opened_at is None, s.opened_at, s.id)),
        moves={run.view.id: views.moves_for(services, me, run, slots)},
        fields={run.view.id: move_fields(services, run.view)},
        lines=lines,
        total=total,
        refusal=refusal,
        board=board_url(run.view.workflow),
        paged=after_id > 0,
        following=str(lines[-1].id) if more and lines else None,
        pager_base=f"{RUNS}/{run.view.id}?",
        here=f"{RUNS}/{run.view.id}",
    )


@post(f"{RUNS}/{{run_id:str}}/move", include_in_schema=False, status_code=303)
async def move(
    state: State, request: Request[Any, Any, Any], run_id: FromPath[str]
) -> Response[Any]:
    """Make a legal move (``move``: its name) through the ``move`` mutation's use case; a
    refusal is shown on the run's page with its code, and changes nothing."""
    services, me, form, answer = await pages.posted(state, request)
    if answer is not None or me is None:
        return answer or pages.sign_in_page()
    back = form.get("_back") or ""
    if not (back.startswith(f"{BOARDS}/") or back == f"{RUNS}/{run_id}"):
        back = f"{RUNS}/{run_id}"
    name = form.get("_move") or ""
    try:
        run, _ = await views.run_detail(services, me, run_id)
        declared = move_fields(services, run.view).get(name, ())
        link_pages.check_form(services, form)  # the edge's text limits, as on every form
        data = link_core.payload_from_form(declared, form)
        await run_service.move(
            services,
            me,
            run_id=run_id,
            name=name,
            data=data or None,
            expected_version=pages.form_version(form),
        )
    except errors.TaskflowError as refused:
        status = pages.refusal_status(refused)
        return await _run_page(services, me, run_id, None, status, refused)
    return Redirect(back, status_code=303)


ROUTES = [boards, board, run_page, move]
