"""Rendering the report pages: the templates and the headers every answer carries."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import jinja2
from litestar.response import Response

#: Litestar adds "; charset=utf-8" to text types itself: naming it here sent it twice.
HTML = "text/html"
HEADERS = {
    "Cache-Control": "no-store",
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Content-Security-Policy": (
        "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; "
        "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
    ),
}

_HERE = Path(__file__).parent
_templates = jinja2.Environment(
    loader=jinja2.FileSystemLoader([_HERE / "templates" / "reports", _HERE / "templates"]),
    autoescape=True,
    undefined=jinja2.StrictUndefined,
)


def html(template: str, status: int, **values: Any) -> Response[str]:
    """A report template rendered as a page, with the safe headers."""
    body = _templates.get_template(template).render(**values)
    return Response(body, status_code=status, media_type=HTML, headers=HEADERS)
