"""GraphiQL at ``/graphql`` without internet: the page and its assets come from the package.

Strawberry's page loads React and GraphiQL from a CDN, so offline it stays a blank
"Loading..." page. Ours loads the same pinned builds from ``/graphiql/`` (files under
``static/vendor/graphiql/``, byte-identical to the npm packages graphiql 3.8.3, react 18.2.0
and react-dom 18.2.0, with their MIT licences).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from litestar.datastructures import CacheControlHeader
from litestar.router import Router
from litestar.static_files import create_static_files_router

# Third-party files live under vendor/ (kept as published; tools that compare code skip it).
ASSETS = Path(__file__).parent / "static" / "vendor" / "graphiql"
PAGE = (Path(__file__).parent / "templates" / "graphiql.html").read_text()
#: Pinned versions of the files served (and where they came from: ``npm pack <name>@<v>``).
VERSIONS = {"graphiql": "3.8.3", "react": "18.2.0", "react-dom": "18.2.0"}


def assets_router() -> Router:
    """``GET /graphiql/<file>``: the page's scripts, stylesheet and licences."""
    return create_static_files_router(
        path="/graphiql",
        directories=[ASSETS],
        name="graphiql",
        cache_control=CacheControlHeader(max_age=86400, public=True),
    )


def offline(controller: type[Any]) -> type[Any]:
    """The GraphQL controller, its IDE page served from the package instead of a CDN."""

    class OfflineGraphiQL(controller):  # type: ignore[misc]
        @property
        def graphql_ide_html(self) -> str:
            return PAGE

    return OfflineGraphiQL
