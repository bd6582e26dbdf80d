"""The magic-link page: ``GET /l/{token}`` shows the form, ``POST /l/{token}`` completes the slot.

Plain server-rendered HTML (Jinja, autoescaped) with inline CSS and no script:
nothing auto-submits. Every response carries ``Cache-Control: no-store``,
``Referrer-Policy: no-referrer`` (the token is in the URL) and
``X-Robots-Tag: noindex``. The token is never logged: these handlers catch
every error themselves (Litestar would log the request path of an uncaught
one) and log only a reference.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import jinja2
from litestar import Request, get, head, post
from litestar.datastructures import State, UploadFile
from litestar.params import FromPath
from litestar.response import Response

from taskflow import errors
from taskflow.api import access_log
from taskflow.api import files as files_api
from taskflow.api import limits as edge
from taskflow.core.definition import fields as fl
from taskflow.core.files import files as fi
from taskflow.core.links import links as core
from taskflow.service.common import outage
from taskflow.service.common.container import Services
from taskflow.service.files import files as file_service
from taskflow.service.links import link_use

log = logging.getLogger("taskflow.api.links")

#: Litestar adds "; charset=utf-8" to text types itself: naming it here sent it twice.
HTML = "text/html"
HEADERS = {
    "Cache-Control": "no-store",
    "Referrer-Policy": "no-referrer",
    "X-Robots-Tag": "noindex, nofollow",
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Content-Security-Policy": (
        "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; "
        "frame-ancestors 'none'; base-uri 'none'"
    ),
}
#: The same answer to every unusable link (410 Gone: it existed or not, it will not work).
UNUSABLE_STATUS = 410
UNAVAILABLE_STATUS = 503

#: HTML input type per payload field type (choice and boolean have their own markup).
INPUT_TYPES = {
    "text": "text",
    "number": "text",
    "integer": "text",
    "date": "date",
    "url": "url",
    "file": "text",
}
HINTS = {
    # The box is the browser's date widget, shown in the reader's own date order:
    # a hint naming one format (YYYY-MM-DD) contradicted it (mm/dd/yyyy, dd.mm.yyyy).
    "date": "Pick the date from the calendar, or type it in the order the box shows.",
    "file": "A link to the document (e.g. a shared-drive address) or its reference.",
    "url": "A web address starting with https://",
    "number": "A number, e.g. 12.50",
    "integer": "A whole number.",
}


def _humanize(name: str) -> str:
    return name.replace("_", " ").capitalize()


_HERE = Path(__file__).parent
_templates = jinja2.Environment(
    loader=jinja2.FileSystemLoader([_HERE / "templates" / "links", _HERE / "templates"]),
    autoescape=True,
    undefined=jinja2.StrictUndefined,
)
_templates.filters["humanize"] = _humanize


def _html(
    template: str, status: int, headers: Mapping[str, str] | None = None, **values: Any
) -> Response[str]:
    body = _templates.get_template(template).render(**values)
    return Response(
        body, status_code=status, media_type=HTML, headers={**HEADERS, **(headers or {})}
    )


def _services(state: State) -> Services:
    services: Services = state.services
    return services


def _client(request: Request[Any, Any, Any], services: Services) -> str:
    # The ASGI client address: the peer, or behind a trusted proxy the address it
    # forwarded (taskflow serve, TASKFLOW_TRUSTED_PROXIES); headers are never read here.
    return link_use.client_key(services, request.client.host if request.client else None)


def _form_page(
    page: link_use.Page,
    status: int = 200,
    *,
    values: Mapping[str, str] | None = None,
    problems: Mapping[str, str] | None = None,
    notice: str | None = None,
) -> Response[str]:
    return _html(
        "form.html",
        status,
        page=page,
        values=values or {},
        errors=problems or {},
        notice=notice,
        labels={f.name: f.label or _humanize(f.name) for f in page.fields},
        hints={f.name: field_hint(f) for f in page.fields},
        input_types=INPUT_TYPES,
        uploads={f.name for f in page.fields if is_upload(f)},
    )


def is_upload(field: fl.Field) -> bool:
    return field.takes_uploads


def field_hint(field: fl.Field) -> str | None:
    if is_upload(field):
        kinds = ", ".join(t.split("/")[-1].upper() for t in field.content_types)
        count = f"up to {field.max_files} files" if field.max_files > 1 else "one file"
        return f"{kinds}; {count} of at most {field.max_bytes // (1024 * 1024)} MB each."
    return HINTS.get(field.type)


def _refused(error: errors.TaskflowError) -> Response[str]:
    if isinstance(error, core.Throttled):
        seconds = int(error.facts.get("retry_after", 60))
        return _html("throttled.html", 429, {"Retry-After": str(seconds)}, message=error.message)
    return _html("unusable.html", UNUSABLE_STATUS, message=link_use.UNUSABLE)


def _failed(error: Exception) -> Response[str]:
    if outage.is_unavailable(error):
        log.warning("magic-link page: database unavailable (%s)", type(error).__name__)
        retry = {"Retry-After": str(outage.RETRY_AFTER_SECONDS)}
        return _html("unavailable.html", UNAVAILABLE_STATUS, retry)
    reference = uuid.uuid4().hex[:12]
    # The traceback, never the path: the token is in the path.
    log.exception("magic-link page failed (reference %s)", reference)
    return _html("error.html", 500, reference=reference)


async def _page(state: State, request: Request[Any, Any, Any], token: str) -> Response[str]:
    try:
        services = _services(state)
        page = await link_use.open_page(services, token, _client(request, services))
    except (core.LinkUnusable, core.Throttled) as refused:
        return _refused(refused)
    except Exception as failed:
        return _failed(failed)
    _note(page.link)
    return _form_page(page)


def _note(link: core.LinkView) -> None:
    """The access line's principal on a link's page: the link's id (never its token, nor
    the recipient's address)."""
    access_log.note_principal(f"link:{link.id}")


@get("/l/{token:str}", include_in_schema=False)
async def show(
    state: State, request: Request[Any, Any, Any], token: FromPath[str]
) -> Response[str]:
    """The form; reads only (mail scanners and previews fetch links before people do)."""
    return await _page(state, request, token)


@head("/l/{token:str}", include_in_schema=False)
async def show_head(
    state: State, request: Request[Any, Any, Any], token: FromPath[str]
) -> Response[None]:
    """What GET answers, without the body; reads only."""
    answer = await _page(state, request, token)
    return Response(
        None,
        status_code=answer.status_code,
        headers=dict(answer.headers),
        media_type=answer.media_type,
    )


def check_form(services: Services, form: Mapping[str, str]) -> None:
    """The edge's input limits (no NUL, no surrogates, capped lengths) on a form's values,
    answered as a payload problem of the field at fault, before anything is read."""
    caps = edge.Limits.from_settings(services.settings)
    for name, value in form.items():
        try:
            edge.check_text(name, "field name", caps.max_text_chars)
            edge.check_text(value, name, caps.max_text_chars)
        except errors.ValidationError as refused:
            reason = refused.message.removeprefix(f"{name} ")
            raise fl.PayloadError([fl.FieldProblem(field=name, reason=reason)]) from None


def _echoable(services: Services, form: Mapping[str, str]) -> dict[str, str]:
    """The form's values fit to show again (a refused one is left out, not echoed)."""
    caps = edge.Limits.from_settings(services.settings)
    kept = {}
    for name, value in form.items():
        try:
            edge.check_text(value, name, caps.max_text_chars)
        except errors.ValidationError:
            continue
        kept[name] = value
    return kept


async def form_values(request: Request[Any, Any, Any]) -> dict[str, str]:
    """A posted form's text values, the first of each name (files are not read here)."""
    return (await form_and_files(request))[0]


async def form_and_files(
    request: Request[Any, Any, Any],
) -> tuple[dict[str, str], dict[str, list[tuple[str | None, bytes]]]]:
    """The form's text values, and its files by field (an empty file input sends a part
    with no name and no bytes: not a file)."""
    form = await request.form()
    values: dict[str, str] = {}
    uploads: dict[str, list[tuple[str | None, bytes]]] = {}
    for name, value in form.multi_items():
        if isinstance(value, str):
            values.setdefault(name, value)
        elif isinstance(value, UploadFile):
            try:
                data = await value.read()
            finally:
                await value.close()
            if data or value.filename:
                uploads.setdefault(name, []).append((value.filename, data))
    return values, uploads


async def _kept(
    services: Services,
    token: str,
    client: str,
    uploads: dict[str, list[tuple[str | None, bytes]]],
) -> dict[str, Any]:
    """The uploads checked against the link's slot's fields and stored; their references.
    A refused file is that field's problem on the page (nothing stored)."""
    page = await link_use.open_page(services, token, client, submitting=True)
    uploader = file_service.link_uploader(page.link.id)
    return await kept_files(services, page.fields, uploads, uploader)


async def kept_files(
    services: Services,
    fields: Sequence[fl.Field],
    uploads: dict[str, list[tuple[str | None, bytes]]],
    uploader: str,
) -> dict[str, Any]:
    """The uploads checked against ``fields`` and stored (all or none) as ``uploader``'s;
    their references as payload values. A refused file is that field's problem on the form
    (the link page's and the console's)."""
    try:
        return await file_service.keep_many(services, fields, uploads, uploader)
    except (fi.FileRefused, errors.ValidationError) as refused:
        field = str(refused.facts.get("field") or next(iter(uploads)))
        raise fl.PayloadError([fl.FieldProblem(field, refused.message)]) from None


@post(
    "/l/{token:str}",
    include_in_schema=False,
    status_code=200,
    request_max_body_size=files_api.MAX_REQUEST_BYTES,
)
async def submit(
    state: State, request: Request[Any, Any, Any], token: FromPath[str]
) -> Response[str]:
    """Validate the form, spend the link and complete the slot in one transaction."""
    services = _services(state)
    client = _client(request, services)
    try:
        form, uploads = await form_and_files(request)
        try:
            check_form(services, form)
            payload: dict[str, Any] = dict(form)
            if uploads:
                payload |= await _kept(services, token, client, uploads)
            done = await link_use.complete(
                services, token, payload, client, page_token=form.get("_page"), from_page=True
            )
        except fl.PayloadError as invalid:
            page = await link_use.open_page(services, token, client)
            _note(page.link)
            return _form_page(
                page, 422, values=_echoable(services, form), problems=core.form_problems(invalid)
            )
        except link_use.PageExpired as expired:
            page = await link_use.open_page(services, token, client)
            _note(page.link)
            return _form_page(page, 409, values=form, notice=expired.message)
    except (core.LinkUnusable, core.Throttled) as refused:
        return _refused(refused)
    except fi.StorageUnavailable:
        log.warning("magic-link page: file storage unavailable")
        return _html("unavailable.html", UNAVAILABLE_STATUS, {"Retry-After": "60"})
    except Exception as failed:
        return _failed(failed)
    _note(done.link)
    return _html("done.html", 200, done=done)


ROUTES = [show, show_head, submit]
