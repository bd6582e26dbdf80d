"""GraphiQL's page and assets ship in the package: pinned builds, licences, no CDN."""

from __future__ import annotations

import re
from pathlib import Path

from graphql import build_schema, parse, validate

from taskflow.api import graphiql

SCHEMA = Path(__file__).resolve().parents[2] / "graphql" / "schema.graphql"


def test_the_assets_are_the_pinned_builds_with_their_licences() -> None:
    names = {p.name for p in graphiql.ASSETS.iterdir()}
    assert {
        "graphiql.min.js",
        "graphiql.min.css",
        "react.production.min.js",
        "react-dom.production.min.js",
        "LICENSE.graphiql.txt",
        "LICENSE.react.txt",
        "LICENSE.react-dom.txt",
    } <= names
    assert "https://" not in graphiql.PAGE
    react = (graphiql.ASSETS / "react.production.min.js").read_text()
    assert graphiql.VERSIONS["react"] in react
    assert sum(p.stat().st_size for p in graphiql.ASSETS.iterdir()) < 5_000_000


def test_the_example_query_is_valid_against_the_schema() -> None:
    found = re.search(r"EXAMPLE_QUERY = `(.*?)`;", graphiql.PAGE, re.S)
    assert found is not None
    assert validate(build_schema(SCHEMA.read_text()), parse(found.group(1))) == []
