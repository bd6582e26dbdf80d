"""Signing in to the report pages: a short-lived server-side session, never the API token.

``POST /reports/sign-in`` checks a pasted staff token and answers with a cookie that
holds only a random session id (HttpOnly, SameSite=Strict, scoped to ``/reports``,
``Secure`` when ``TASKFLOW_PUBLIC_URL`` is https, expiring with the session:
``TASKFLOW_REPORT_SESSION_TTL``, or the token's own expiry when that comes first).
``POST /reports/sign-out`` revokes the session on the server. Both refuse a form another
site sent (login CSRF): the request's ``Origin`` (or, lacking it, ``Referer``) must be
this site, i.e. the public URL's origin or the host the request was sent to.
"""

from __future__ import annotations

from typing import Annotated, Any
from urllib.parse import urlsplit

from litestar import Request, post
from litestar.connection import ASGIConnection
from litestar.datastructures import Cookie, State
from litestar.enums import RequestEncodingType
from litestar.params import Body
from litestar.response import Redirect, Response

from taskflow import errors
from taskflow.api import access_log, report_view
from taskflow.core.access import principals
from taskflow.service.access import principals as principal_service
from taskflow.service.access import report_sessions
from taskflow.service.common.container import Services

#: The cookie holding the session id (a new name: cookies of old versions held a token).
COOKIE = "taskflow_report_session"


def _services(state: State) -> Services:
    services: Services = state.services
    return services


def bearer(request: Request[Any, Any, Any]) -> str | None:
    """The token of an ``Authorization: Bearer`` header, or None."""
    scheme, _, token = (request.headers.get("authorization") or "").partition(" ")
    if scheme.lower() == "bearer" and token.strip():
        return token.strip()
    return None


async def caller(
    services: Services, request: Request[Any, Any, Any], cookie: str = COOKIE
) -> principals.Principal | None:
    """Who asks: a bearer token (scripts, the CSV) or the page's session cookie (``cookie``:
    the reports' or the console's); else None. Noted on the request's access line."""
    token = bearer(request)
    found: principals.Principal | None
    if token is not None:
        try:
            found = await principal_service.authenticate(services, token)
        except errors.AuthenticationError:
            return None
    else:
        found = await report_sessions.principal_of(services, request.cookies.get(cookie))
    if found is not None:
        access_log.note_principal(found.id)
    return found


def _origin(url: str) -> tuple[str, str] | None:
    parts = urlsplit(url)
    if not parts.scheme or not parts.netloc:
        return None
    return parts.scheme.lower(), parts.netloc.lower()


def same_site(services: Services, request: ASGIConnection[Any, Any, Any, Any]) -> bool:
    """True when the form (or socket) came from this site (Origin, else Referer; neither:
    refused)."""
    sent = request.headers.get("origin")
    if not sent or sent == "null":
        sent = request.headers.get("referer")
    if not sent:
        return False
    origin = _origin(sent)
    if origin is None:
        return False
    if origin == _origin(services.settings.public_url):
        return True
    # The host the browser sent this request to (a browser sets Host itself): the page
    # opened as localhost:8000 when the public URL says 127.0.0.1:8000.
    host = (request.headers.get("host") or "").lower()
    return bool(host) and origin[1] == host


def _cross_site() -> Response[str]:
    return report_view.html("cross_site.html", 403)


async def open_session(
    services: Services, request: Request[Any, Any, Any], token: str, name: str, path: str
) -> Cookie:
    """Check a pasted token and open a report session (the reports' and the console's one
    mechanism); the strict cookie ``name`` scoped to ``path`` holds only its id. The
    request's old session ends here: a new session never reuses it (fixation).
    AuthenticationError when the token is not valid."""
    opened = await report_sessions.sign_in(services, token.strip())
    access_log.note_principal(opened.principal.id)
    await report_sessions.sign_out(services, request.cookies.get(name))
    return Cookie(
        key=name,
        value=opened.session_id,
        path=path,
        httponly=True,
        samesite="strict",
        # Sent over HTTPS only when taskflow is served over HTTPS (plain http on a dev machine).
        secure=services.settings.public_url.startswith("https://"),
        # The browser drops it when the session ends (the TTL, or the token's expiry).
        max_age=max(0, int((opened.expires_at - services.clock.now()).total_seconds())),
    )


@post("/reports/sign-in", include_in_schema=False, status_code=303)
async def sign_in(
    state: State,
    request: Request[Any, Any, Any],
    data: Annotated[dict[str, str], Body(media_type=RequestEncodingType.URL_ENCODED)],
) -> Response[Any]:
    """Check the pasted token; open a report session and keep its id in a strict cookie."""
    services = _services(state)
    if not same_site(services, request):
        return _cross_site()
    try:
        cookie = await open_session(services, request, data.get("token") or "", COOKIE, "/reports")
    except errors.AuthenticationError:
        return report_view.html(
            "sign_in.html",
            401,
            error="That token is not valid (expired, revoked or mistyped): mint a new one with "
            "taskflow token <your-login>.",
            next="/reports/sla",
        )
    return Redirect("/reports/sla", status_code=303, cookies=[cookie])


@post("/reports/sign-out", include_in_schema=False, status_code=303)
async def sign_out(state: State, request: Request[Any, Any, Any]) -> Response[Any]:
    """Revoke the session on the server and forget the cookie."""
    services = _services(state)
    if not same_site(services, request):
        return _cross_site()
    await report_sessions.sign_out(services, request.cookies.get(COOKIE))
    cookie = Cookie(key=COOKIE, value="", path="/reports", max_age=0, httponly=True)
    return Redirect("/reports/sla", status_code=303, cookies=[cookie])


ROUTES = [sign_in, sign_out]
