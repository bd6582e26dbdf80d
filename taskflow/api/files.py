"""Attached files over HTTP (docs/files.md).

- ``POST /files`` (staff bearer token; multipart ``slot``, ``field``, ``file``; or no token
  and a magic link's token as the part ``link``): the file is sniffed and capped against
  the slot's field and stored as the caller's upload; the answer is the reference
  ``{name, type, size, sha256}`` that caller's ``completeSlot`` (``completeWithLink``)
  payload then carries.
- ``GET /files/url?slot=&sha256=`` (staff bearer token): a short-lived signed download
  path for a file of a slot's payload, if the caller may see the slot.
- ``GET /files/d/{signed}``: the file, while the signature holds; served as an attachment
  with ``nosniff`` so a browser never renders an upload as a page.

Refusals are JSON ``{"code", "message", ...facts}``: 400 bad input, 401 no caller, 404 not
found (or not visible), 413 too large, 415 a refused type, 503 storage (or database) down with
``Retry-After`` and ``retryAfterSeconds``: nothing was stored or changed, send it again.
"""

from __future__ import annotations

import urllib.parse
from typing import Any

from litestar import Request, get, post
from litestar.datastructures import State, UploadFile
from litestar.params import FromPath, FromQuery
from litestar.response import Response

from taskflow import errors
from taskflow.api import report_signin
from taskflow.api.graphql.common import relay
from taskflow.core.common import refusals
from taskflow.core.files import files as fi
from taskflow.service.access import principals as principal_service
from taskflow.service.common import outage
from taskflow.service.common.container import Services
from taskflow.service.files import files as file_service
from taskflow.service.links import link_use

#: The largest upload request read at all (a field's own cap is checked after).
MAX_REQUEST_BYTES = 64 * 1024 * 1024
_HEADERS = {"Cache-Control": "no-store", "X-Content-Type-Options": "nosniff"}


def _services(state: State) -> Services:
    services: Services = state.services
    return services


def _refusal(error: errors.TaskflowError) -> Response[Any]:
    status = 400
    if isinstance(error, errors.AuthenticationError):
        status = 401
    elif isinstance(error, errors.NotFound | refusals.LinkUnusable):
        status = 404
    elif isinstance(error, refusals.Throttled):
        status = 429
    elif isinstance(error, fi.StorageUnavailable):
        status = 503
    elif isinstance(error, fi.FileRefused):
        status = 413 if "max_bytes" in error.facts else 415 if "sniffed" in error.facts else 400
    body = {"code": error.code, "message": error.message, **error.facts}
    headers = dict(_HEADERS)
    if status == 503:
        # Retryable and nothing changed: tell the client when to send it again.
        headers["Retry-After"] = str(outage.RETRY_AFTER_SECONDS)
        body["retryAfterSeconds"] = outage.RETRY_AFTER_SECONDS
    return Response(body, status_code=status, headers=headers)


def _outage_refusal(failed: Exception) -> Response[Any]:
    """The database (not the file storage) did not answer: the same 503, else raised again."""
    if outage.is_unavailable(failed):
        return _refusal(fi.StorageUnavailable("The database did not answer; try again."))
    raise failed


async def _caller(services: Services, request: Request[Any, Any, Any]) -> Any:
    token = report_signin.bearer(request)
    if token is None:
        raise errors.AuthenticationError(
            "Send a staff token: 'Authorization: Bearer <token>' (taskflow token)."
        )
    return await principal_service.authenticate(services, token)


async def _read_form(request: Request[Any, Any, Any]) -> Any:
    try:
        return await request.form()
    except Exception as broken:
        # A body cut short (the client went away) or not multipart: nothing was stored.
        raise errors.ValidationError(
            "The upload did not arrive whole (interrupted or not multipart/form-data); "
            "nothing was stored: send it again."
        ) from broken


@post("/files", include_in_schema=False, request_max_body_size=MAX_REQUEST_BYTES)
async def upload(state: State, request: Request[Any, Any, Any]) -> Response[Any]:
    """Store one file for a slot's ``file`` field; its reference."""
    services = _services(state)
    try:
        # A staff bearer token, or (no token) the form part 'link': a magic link's token.
        actor = await _caller(services, request) if report_signin.bearer(request) else None
        form = await _read_form(request)
        link, slot, field, sent = (form.get(k) for k in ("link", "slot", "field", "file"))
        if actor is None and not isinstance(link, str):
            await _caller(services, request)  # the 401 that says what to send
        if not isinstance(field, str) or (actor is not None and not isinstance(slot, str)):
            raise errors.ValidationError("Send the form fields 'slot' (an id) and 'field'.")
        if not isinstance(sent, UploadFile):
            raise errors.ValidationError("Send the file as the multipart part 'file'.")
        try:
            data = await sent.read()
        finally:
            await sent.close()
        if actor is None:
            client = link_use.client_key(services, request.client.host if request.client else None)
            ref = await file_service.upload_for_link(
                services, str(link), client, field, sent.filename, data
            )
        else:
            slot_id = relay.local_id(str(slot), "Slot", "slot")
            ref = await file_service.upload_for_slot(
                services, actor, slot_id, field, sent.filename, data
            )
    except errors.TaskflowError as refused:
        return _refusal(refused)
    except Exception as failed:
        return _outage_refusal(failed)
    return Response(ref.to_json(), status_code=201, headers=_HEADERS)


@get("/files/url", include_in_schema=False)
async def download_url(
    state: State, request: Request[Any, Any, Any], slot: FromQuery[str], sha256: FromQuery[str]
) -> Response[Any]:
    """A signed download path for a file of a slot the caller may see."""
    services = _services(state)
    try:
        actor = await _caller(services, request)
        path = await file_service.sign(
            services, actor, relay.local_id(slot, "Slot", "slot"), sha256
        )
    except errors.TaskflowError as refused:
        return _refusal(refused)
    except Exception as failed:
        return _outage_refusal(failed)
    ttl = file_service.settings_of(services).url_ttl
    return Response({"url": path, "expiresInSeconds": ttl}, headers=_HEADERS)


@get("/files/d/{signed:str}", include_in_schema=False)
async def download(state: State, signed: FromPath[str]) -> Response[Any]:
    """The file a signed path names, while it works."""
    try:
        ref, data = await file_service.read(_services(state), signed)
    except errors.TaskflowError as refused:
        return _refusal(refused)
    except Exception as failed:
        return _outage_refusal(failed)
    # The sniffed type, as an attachment: the bytes are never shown as our own page.
    disposition = "attachment; filename*=UTF-8''" + _quoted(ref.name)
    return Response(
        data,
        media_type=ref.type,
        headers={**_HEADERS, "Content-Disposition": disposition, "Referrer-Policy": "no-referrer"},
    )


def _quoted(name: str) -> str:
    return urllib.parse.quote(name, safe="")


ROUTES = [upload, download_url, download]
