"""One card of a live console page, rendered as the page renders it: the inbox row of a
slot (``/console/cards/slot/{id}``) and the board card of a run (``/console/cards/run/{id}``).

The page's script asks for the card a subscription message names and puts it in place
(docs/console.md, "Live pages"), instead of reading the whole page again. The same session,
use cases and rules as the pages: 401 without a session; 404 for what the caller may not see
(as for nothing there); 204 when the caller sees it but it is not on that page (a slot not in
their inbox, a run not on that board): the script removes its card.
"""

from __future__ import annotations

from typing import Any

from litestar import Request, get
from litestar.datastructures import State
from litestar.params import FromPath
from litestar.response import Response

from taskflow import errors
from taskflow.api import report_view
from taskflow.api.console import pages, runs
from taskflow.api.graphql.common import relay
from taskflow.core.slots import filters
from taskflow.service.slots import views

CARDS = f"{pages.PATH}/cards"


def _local(given: str, type_name: str) -> str:
    """A card's id as the page or a subscription names it: a global id, or the local one."""
    try:
        found_type, local = relay.from_global_id(given)
    except errors.ValidationError:
        return given
    return local if found_type == type_name else given


def _empty(status: int) -> Response[str]:
    return Response("", status_code=status, media_type=report_view.HTML, headers=pages.HEADERS)


@get(f"{CARDS}/slot/{{slot_id:str}}", include_in_schema=False)
async def slot_card(
    state: State, request: Request[Any, Any, Any], slot_id: FromPath[str]
) -> Response[str]:
    """The slot's inbox row for the caller (``?sort=``: the page's sort, for its place)."""
    services, me = await pages.signed_in(state, request)
    if me is None:
        return _empty(401)
    sort = request.query_params.get("sort") or "urgency"
    try:
        slot = await views.visible_slot(services, me, _local(slot_id, "Slot"))
        found, _ = await views.inbox(
            services, me, filters.SlotFilter(runs=[slot.run_id]), first=views.MAX_FIRST, after=None
        )
    except errors.TaskflowError as refused:
        return _empty(pages.refusal_status(refused))
    row = next((r for r in found if r.slot.id == slot.id), None)
    if row is None:
        return _empty(204)
    now = services.clock.now()
    return pages.html("inbox_row.html", 200, me=me, row=row, now=now, sort=sort)


@get(f"{CARDS}/run/{{run_id:str}}", include_in_schema=False)
async def run_card(
    state: State, request: Request[Any, Any, Any], run_id: FromPath[str]
) -> Response[str]:
    """The run's card on its workflow's board for the caller (``?ended=1``: a board that
    shows ended runs); its lane is ``data-lane`` of the answer's first element."""
    services, me = await pages.signed_in(state, request)
    if me is None:
        return _empty(401)
    ended = request.query_params.get("ended") == "1"
    try:
        run, _ = await views.run_detail(services, me, _local(run_id, "Run"))
        workflow = run.view.workflow
        cards, _, _ = await views.board(
            services, me, workflow, first=1, after=None, include_ended=ended, runs=[run.view.id]
        )
    except errors.TaskflowError as refused:
        return _empty(pages.refusal_status(refused))
    if not cards:
        return _empty(204)
    card = cards[0]
    return pages.html(
        "board_card.html",
        200,
        me=me,
        card=card,
        moves={card.run.view.id: views.moves_for(services, me, card.run, card.slots)},
        fields={card.run.view.id: runs.move_fields(services, card.run.view)},
        here=runs.board_url(workflow),
    )


ROUTES = [slot_card, run_card]
