"""The staff console at ``/console``: sign in, my inbox, claim next, a slot's page and its
actions (claim, release, assign, complete with the slot's form).

Server-rendered HTML (Jinja, autoescaped) with no script, as the report pages. Sign-in is
the report-session mechanism (``report_signin.open_session``) with its own cookie scoped to
``/console``; a bearer token works too. Every form post must come from this site
(``report_signin.same_site``: Origin, else Referer) and the cookie is SameSite=Strict.
Actions call the same service use cases the GraphQL mutations call; a refusal is shown
with its typed code and message, and changes nothing.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import jinja2
from litestar import Request, get, post
from litestar.datastructures import Cookie, State
from litestar.params import FromPath
from litestar.response import Redirect, Response

from taskflow import errors
from taskflow.api import files as files_api
from taskflow.api import link_pages, report_signin, report_view
from taskflow.api.graphql.common import relay
from taskflow.api.graphql.slots import work
from taskflow.core.access import principals
from taskflow.core.definition import fields as fl
from taskflow.core.links import links as link_core
from taskflow.core.slots import filters
from taskflow.core.slots import slots as slot_core
from taskflow.service.access import access, report_sessions
from taskflow.service.common.container import Services
from taskflow.service.files import files as file_service
from taskflow.service.slots import slots as slot_service
from taskflow.service.slots import views

#: The console's session cookie (a report session; its own name and path).
COOKIE = "taskflow_console_session"
PATH = "/console"
#: Rows per inbox page (the inbox use case's own cap).
PAGE_SIZE = views.MAX_FIRST
SORTS = ("urgency", "opened", "name")

_HERE = Path(__file__).parent.parent
_templates = jinja2.Environment(
    loader=jinja2.FileSystemLoader([_HERE / "templates" / "console", _HERE / "templates"]),
    autoescape=True,
    undefined=jinja2.StrictUndefined,
)


def remaining(due: datetime | None, now: datetime) -> tuple[str, str]:
    """The SLA clock as a row shows it: ("2h 05m left" | "overdue by 10m" | "no deadline",
    its style: "" | "due-soon" (under an hour) | "due-late")."""
    if due is None:
        return "no deadline", ""
    seconds = int((due - now).total_seconds())
    days, rest = divmod(abs(seconds), 86400)
    hours, rest = divmod(rest, 3600)
    text = f"{days}d {hours}h" if days else f"{hours}h {rest // 60:02d}m"
    if seconds < 0:
        return f"overdue by {text}", "due-late"
    return f"{text} left", "due-soon" if seconds < 3600 else ""


def _instant(at: datetime | None) -> str:
    """``at`` as text that sorts as the instant does (fixed width, UTC); "~" after every
    instant for none (nulls last)."""
    return at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f") if at is not None else "~"


def inbox_order(row: views.SlotRow, sort: str) -> str:
    """Where ``row`` stands in an inbox page sorted by ``sort``, as text that compares as
    the page's order does (the live page places a changed row by it)."""
    slot = row.slot
    if sort == "opened":
        return f"{_instant(slot.opened_at)} {slot.id}"
    if sort == "name":
        return f"{slot.label or slot.name}\t{slot.id}"  # a tab sorts before any character
    due, priority, slot_id = row.cursor
    return f"{_instant(due)} {priority + 10**9:010d} {slot_id}"


def board_order(started_at: datetime, run_id: str) -> str:
    """Where a run's card stands on a board (its runs in the order they started)."""
    return f"{_instant(started_at)} {run_id}"


_templates.globals["remaining"] = remaining
_templates.globals["global_id"] = relay.to_global_id
_templates.globals["inbox_order"] = inbox_order
_templates.globals["board_order"] = board_order


#: The report pages' headers; the console's one script (same origin) may run and open
#: the console's own socket.
HEADERS = {
    **report_view.HEADERS,
    "Content-Security-Policy": report_view.HEADERS["Content-Security-Policy"]
    + "; script-src 'self'; connect-src 'self'",
}


def html(template: str, status: int, **values: Any) -> Response[str]:
    body = _templates.get_template(template).render(**values)
    return Response(body, status_code=status, media_type=report_view.HTML, headers=HEADERS)


def services_of(state: State) -> Services:
    services: Services = state.services
    return services


def sign_in_page(status: int = 401, error: str | None = None) -> Response[str]:
    return html("sign_in.html", status, error=error)


def refusal_status(error: errors.TaskflowError) -> int:
    """The HTTP status a console page answers a refusal with: 404 for what the caller may
    not see (as for nothing there), 403 FORBIDDEN, 400 bad input, else 409."""
    if isinstance(error, errors.NotFound):
        return 404
    if isinstance(error, errors.Forbidden):
        return 403
    return 400 if isinstance(error, errors.ValidationError) else 409


def refusal_page(me: principals.Principal, error: errors.TaskflowError, back: str) -> Response[str]:
    return html(
        "refused.html",
        refusal_status(error),
        me=me,
        code=error.code,
        message=error.message,
        back=back,
    )


async def signed_in(
    state: State, request: Request[Any, Any, Any]
) -> tuple[Services, principals.Principal | None]:
    """The services and the console's caller (None: nobody signed in)."""
    services = services_of(state)
    return services, await report_signin.caller(services, request, COOKIE)


@get("/console", include_in_schema=False)
async def inbox(state: State, request: Request[Any, Any, Any]) -> Response[str]:
    """My inbox: what I can act on now, most urgent first, a page at a time (each page
    sorted as asked)."""
    services, me = await signed_in(state, request)
    if me is None:
        return sign_in_page()
    sort = request.query_params.get("sort") or "urgency"
    if sort not in SORTS:
        sort = "urgency"
    after = request.query_params.get("after")
    try:
        found, more = await views.inbox(
            services, me, filters.SlotFilter(), first=PAGE_SIZE, after=work.slot_cursor(after)
        )
    except errors.TaskflowError as refused:
        return refusal_page(me, refused, PATH)
    following = work.encode_slot_cursor(found[-1]) if more and found else None
    if sort == "opened":
        found.sort(key=lambda r: (r.slot.opened_at is None, r.slot.opened_at, r.slot.id))
    elif sort == "name":
        found.sort(key=lambda r: (r.slot.label or r.slot.name, r.slot.id))
    return html(
        "inbox.html",
        200,
        me=me,
        rows=found,
        more=more,
        sort=sort,
        now=services.clock.now(),
        paged=bool(after),
        following=following,
        pager_base=f"{PATH}?sort={sort}&",
    )


def _fields(services: Services, workflow: str, version: int, slot: Any) -> tuple[fl.Field, ...]:
    """The payload fields the slot's event takes (the form is built from these)."""
    definition = services.catalog.for_reading(workflow, version)
    if definition is None or not definition.has_state(slot.state):
        return ()  # a version no longer loaded: no form known
    return tuple(definition.slot(slot.state, slot.name).fields)


async def _slot_page(
    services: Services,
    me: principals.Principal,
    slot_id: str,
    status: int = 200,
    *,
    values: dict[str, str] | None = None,
    problems: dict[str, str] | None = None,
    refusal: errors.TaskflowError | None = None,
) -> Response[str]:
    try:
        slot = await views.visible_slot(services, me, slot_id)
        run, _ = await views.run_detail(services, me, slot.run_id)
    except errors.TaskflowError as refused:
        return refusal_page(me, refused, PATH)
    fields = _fields(services, run.view.workflow, run.view.definition_version, slot)
    return html(
        "slot.html",
        status,
        me=me,
        slot=slot,
        run=run.view,
        subject=run.subject,
        fields=fields,
        delegate=slot_core.is_delegate(slot, access.keys(me)),
        uploads={f.name: link_pages.field_hint(f) for f in fields if link_pages.is_upload(f)},
        labels={f.name: f.label or f.name.replace("_", " ").capitalize() for f in fields},
        values=values or {},
        problems=problems or {},
        refusal=refusal,
        now=services.clock.now(),
    )


@get("/console/slots/{slot_id:str}", include_in_schema=False)
async def slot_page(
    state: State, request: Request[Any, Any, Any], slot_id: FromPath[str]
) -> Response[str]:
    """A slot's page: what it waits for, its clocks, its actions and its form."""
    services, me = await signed_in(state, request)
    if me is None:
        return sign_in_page()
    return await _slot_page(services, me, slot_id)


Uploads = dict[str, list[tuple[str | None, bytes]]]


async def posted_with_files(
    state: State, request: Request[Any, Any, Any]
) -> tuple[Services, principals.Principal | None, dict[str, str], Uploads, Response[str] | None]:
    """The services, the caller, the form's values and files; or the answer when the post
    is refused (another site's form: 403; nobody signed in: the sign-in page)."""
    services = services_of(state)
    if not report_signin.same_site(services, request):
        return services, None, {}, {}, html("cross_site.html", 403)
    me = await report_signin.caller(services, request, COOKIE)
    if me is None:
        return services, None, {}, {}, sign_in_page()
    values, uploads = await link_pages.form_and_files(request)
    return services, me, values, uploads, None


async def posted(
    state: State, request: Request[Any, Any, Any]
) -> tuple[Services, principals.Principal | None, dict[str, str], Response[str] | None]:
    """:func:`posted_with_files` for a form that sends no files."""
    services, me, form, _, answer = await posted_with_files(state, request)
    return services, me, form, answer


def form_version(form: dict[str, str]) -> int | None:
    text = form.get("_version", "")
    return int(text) if text.isdigit() else None


@post(
    "/console/slots/{slot_id:str}/{action:str}",
    include_in_schema=False,
    status_code=303,
    request_max_body_size=files_api.MAX_REQUEST_BYTES,
)
async def act(
    state: State, request: Request[Any, Any, Any], slot_id: FromPath[str], action: FromPath[str]
) -> Response[Any]:
    """claim, release, assign (``to``) or complete (the slot's form) through the slot use
    cases the GraphQL mutations call; a refusal is shown with its code and changes nothing."""
    services, me, form, uploads, answer = await posted_with_files(state, request)
    if answer is not None or me is None:
        return answer or sign_in_page()
    version = form_version(form)
    back = PATH if form.get("_back") == PATH else f"{PATH}/slots/{slot_id}"
    try:
        if action == "claim":
            await slot_service.claim(services, me, slot_id, version)
        elif action == "release":
            await slot_service.release(services, me, slot_id, form.get("reason") or None)
        elif action == "assign":
            to = (form.get("to") or "").strip()
            await slot_service.assign(
                services, me, slot_id, to, version, form.get("reason") or None
            )
        elif action == "complete":
            return await _complete(services, me, slot_id, (form, uploads), version, back)
        else:
            raise errors.NotFound(f"The console has no action {action!r}.")
    except errors.TaskflowError as refused:
        return await _slot_page(services, me, slot_id, 409, refusal=refused)
    return Redirect(back, status_code=303)


async def _complete(
    services: Services,
    me: principals.Principal,
    slot_id: str,
    sent: tuple[dict[str, str], Uploads],
    version: int | None,
    back: str,
) -> Response[Any]:
    """Complete the slot with the form's values and its files (each sniffed, capped and
    stored as ``POST /files`` does, before the completion; a refused file stores nothing
    and is that field's message)."""
    form, uploads = sent
    slot = await views.visible_slot(services, me, slot_id)
    run, _ = await views.run_detail(services, me, slot.run_id)
    fields = _fields(services, run.view.workflow, run.view.definition_version, slot)
    try:
        link_pages.check_form(services, form)  # the edge's text limits, as on the link page
        payload = link_core.payload_from_form(fields, form)
        if uploads:
            uploader = file_service.staff_uploader(me)
            payload |= await link_pages.kept_files(services, fields, uploads, uploader)
        await slot_service.complete(
            services, me, slot_id, event=None, payload=payload, expected_version=version
        )
    except fl.PayloadError as invalid:
        shown = {k: v for k, v in form.items() if not k.startswith("_")}
        problems = link_core.form_problems(invalid)
        return await _slot_page(services, me, slot_id, 422, values=shown, problems=problems)
    return Redirect(PATH if back == PATH else back, status_code=303)


@post("/console/claim-next", include_in_schema=False, status_code=303)
async def claim_next(state: State, request: Request[Any, Any, Any]) -> Response[Any]:
    """Take the most urgent open slot I may take, and open its page."""
    services, me, _, answer = await posted(state, request)
    if answer is not None or me is None:
        return answer or sign_in_page()
    try:
        taken = await slot_service.claim_next(services, me, filters.SlotFilter())
    except errors.TaskflowError as refused:
        return refusal_page(me, refused, PATH)
    return Redirect(f"{PATH}/slots/{taken.id}", status_code=303)


@post("/console/sign-in", include_in_schema=False, status_code=303)
async def sign_in(state: State, request: Request[Any, Any, Any]) -> Response[Any]:
    """Open a report session for the console from a pasted staff token."""
    services = services_of(state)
    if not report_signin.same_site(services, request):
        return html("cross_site.html", 403)
    form = await link_pages.form_values(request)
    try:
        cookie = await report_signin.open_session(
            services, request, form.get("token") or "", COOKIE, PATH
        )
    except errors.AuthenticationError:
        return sign_in_page(
            401,
            "That token is not valid (expired, revoked or mistyped): mint a new one with "
            "taskflow token <your-login>.",
        )
    return Redirect(PATH, status_code=303, cookies=[cookie])


@post("/console/sign-out", include_in_schema=False, status_code=303)
async def sign_out(state: State, request: Request[Any, Any, Any]) -> Response[Any]:
    """End the console's session on the server and forget the cookie."""
    services = services_of(state)
    if not report_signin.same_site(services, request):
        return html("cross_site.html", 403)
    await report_sessions.sign_out(services, request.cookies.get(COOKIE))
    cookie = Cookie(key=COOKIE, value="", path=PATH, max_age=0, httponly=True)
    return Redirect(PATH, status_code=303, cookies=[cookie])


ROUTES = [inbox, slot_page, act, claim_next, sign_in, sign_out]
