"""Property: the compiled audience (keys + residual) admits exactly whom the expression means.

The reference below reads an audience expression directly against one
principal, the way a person would; the compiled form must agree with it for
every expression and principal hypothesis finds.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from taskflow.core.definition import audience as au
from taskflow.core.definition.audience import who
from taskflow.core.definition.conditions import expr as ex
from taskflow.core.definition.conditions.expr import subject

NAMES = st.sampled_from(["a", "b", "c"])
SUBJECT = {"owner": "a", "region": "eu", "team": "b"}


def reference(w: au.Who, p: dict[str, Any]) -> bool | None:
    """Does principal ``p`` belong to ``w``? Three-valued: a missing subject field is unknown."""
    if isinstance(w, au.Key | au.AttrRule):
        values = (w.value,) if isinstance(w, au.Key) else w.values
        resolved = [ex.value_of(v, ex.Env(subject=SUBJECT)) for v in values]
        if any(r is ex.MISSING for r in resolved):
            return None
        if isinstance(w, au.AttrRule):
            return p["attributes"].get(w.name) in resolved
        have = {"user": [p["id"]], "role": p["roles"], "group": p["groups"]}[w.kind]
        return any(r in have for r in resolved)
    if isinstance(w, au.Special):
        return True  # anyone
    assert isinstance(w, au.Combine)
    results = [reference(a, p) for a in w.args]
    if w.op == "not":
        return None if results[0] is None else not results[0]
    decisive = w.op == "or"
    if decisive in results:
        return decisive
    return None if None in results else not decisive


def leaves() -> st.SearchStrategy[au.Who]:
    return st.one_of(
        NAMES.map(who.id),
        NAMES.map(who.role),
        NAMES.map(who.group),
        st.just(who.id(subject.owner)),
        st.just(who.id(subject.missing)),
        st.just(who.group(subject.team)),
        st.just(who.attr("region") == subject.region),
        st.just(who.anyone()),
    )


audiences = st.recursive(
    leaves(),
    lambda inner: st.one_of(
        st.tuples(inner, inner).map(lambda t: t[0] | t[1]),
        st.tuples(inner, inner).map(lambda t: t[0] & t[1]),
        st.tuples(inner, inner).map(lambda t: t[0] - t[1]),
    ),
    max_leaves=6,
)

principals = st.fixed_dictionaries(
    {
        "id": NAMES,
        "roles": st.lists(NAMES, max_size=2),
        "groups": st.lists(NAMES, max_size=2),
        "attributes": st.fixed_dictionaries({"region": st.sampled_from(["eu", "us"])}),
    }
)


@settings(max_examples=400)
@given(w=audiences, p=principals)
def test_compiled_audience_agrees_with_the_expression(w: au.Who, p: dict[str, Any]) -> None:
    compiled = au.compile(w, SUBJECT)
    assert compiled.admits(au.principal_keys(p)) is (reference(w, p) is True), (
        f"{w} compiled to {compiled}"
    )
