"""The statement builder: placeholders numbered after the base statement's, values only
ever as parameters, fragments and orders only from their fixed lists."""

from __future__ import annotations

import re
from datetime import UTC, datetime

import pytest

from taskflow.core.access import access
from taskflow.core.slots.claim_facts import ClaimFacts
from taskflow.core.slots.filters import SlotFilter
from taskflow.store.clocks import calendar_days
from taskflow.store.common.sql_builder import FRAGMENTS, BuildError, Statement, with_columns
from taskflow.store.slots import candidacy, claims, queries

EVIL = "x'); DROP TABLE slot; --"


def test_placeholders_follow_the_base_statements_own() -> None:
    st = Statement("SELECT 1 FROM slot sl WHERE sl.holder = $1/*:where*/", "ann")
    st.where("slot_workflow", "expense").where("slot_priority_at_most", 2)
    text, args = st.build()
    assert text == (
        "SELECT 1 FROM slot sl WHERE sl.holder = $1 AND sl.workflow = $2 AND sl.priority <= $3"
    )
    assert args == ["ann", "expense", 2]


def test_no_value_is_ever_written_into_the_text() -> None:
    due = datetime(2026, 12, 1, tzinfo=UTC)
    f = SlotFilter(
        workflow=EVIL,
        state=EVIL,
        name=EVIL,
        holder=EVIL,
        due_before=due,
        audience=[EVIL],
        status=[EVIL],
        scope=(access.Reach(workflows=frozenset({EVIL}), teams=frozenset({EVIL})),),
    )
    args: list[object] = ["me"]
    text = queries.slot_filters(Statement.over(args), f).conditions()
    assert "DROP" not in text
    assert "2026" not in text
    numbers = [int(n) for n in re.findall(r"\$(\d+)", text)]
    assert numbers == list(range(2, len(args) + 1))
    assert args[1:5] == [EVIL, EVIL, EVIL, due]


def test_a_keyset_cursor_is_parameters_too() -> None:
    due = datetime(2026, 12, 1, tzinfo=UTC)
    slot_id = "00000000-0000-0000-0000-000000000001"
    st = Statement("SELECT 1 FROM slot sl WHERE true /*:where*/")
    text, args = queries._after(st, (due, 3, slot_id)).build()
    assert "2026" not in text
    assert slot_id not in text
    assert args[:3] == [due, due, 3]


@pytest.mark.parametrize(
    ("scope", "says"),
    [
        (access.EVERYWHERE, ""),
        (access.NOWHERE, " AND false"),
        ((access.Reach(),), " AND ((true))"),
        (
            (access.Reach(workflows=frozenset({"b", "a"})), access.Reach(teams=frozenset({"t"}))),
            " AND ((sl.workflow = ANY($1::text[])) OR (sl.audience && $2::text[]))",
        ),
    ],
)
def test_scopes_compose_as_before(scope: access.Scope, says: str) -> None:
    args: list[object] = []
    assert queries.scope_sql(scope, args) == says
    if args:
        assert args == [["a", "b"], ["t"]]


def test_a_limit_is_a_checked_int() -> None:
    st = Statement("SELECT 1 LIMIT /*:limit*/")
    assert st.text(limit=20) == "SELECT 1 LIMIT 20"
    # Texts are kept per shape: 1 and 20 composed first must not answer for True and 20.0.
    assert st.text(limit=1) == "SELECT 1 LIMIT 1"
    for bad in ("20; DROP TABLE slot", -1, 20.0, True, None):
        with pytest.raises(BuildError):
            st.text(limit=bad)  # type: ignore[arg-type]


def test_fragments_orders_and_casts_only_from_their_lists() -> None:
    st = Statement("SELECT 1 FROM run r ORDER BY /*:order*/")
    with pytest.raises(BuildError, match="no fragment"):
        st.where("sl.workflow = 'x'")
    with pytest.raises(BuildError, match="takes 1 values"):
        st.where("slot_workflow", "a", "b")
    with pytest.raises(BuildError, match="order"):
        st.order("r.id; DROP TABLE run")
    with pytest.raises(BuildError, match="needs an order"):
        st.text()
    with pytest.raises(BuildError, match="cast"):
        st.param(1, "::int; DROP TABLE run")
    assert st.order("newest").text() == "SELECT 1 FROM run r ORDER BY r.started_at DESC, r.id DESC"


def test_fragments_are_one_line_conditions_without_comments() -> None:
    for name, text in FRAGMENTS.items():
        assert "--" not in text, name
        assert "\n" not in text, name
        assert "$?" in text or "/*:inner*/" in text, f"{name} takes nothing: use a base statement"
        assert not re.search(r"\$\d", text), f"{name} numbers its own placeholders"


def test_unfilled_column_markers_are_refused() -> None:
    with pytest.raises(BuildError, match="unfilled"):
        with_columns({"s": "SELECT /*:columnz*/ FROM slot"}, columns="id")
    assert with_columns({"s": "SELECT /*:c*/ /*:where*/"}, c="id") == {"s": "SELECT id /*:where*/"}


def _squash(text: str) -> str:
    return re.sub(r"\s+", "", text)


@pytest.mark.parametrize(
    ("statement", "alias", "keys", "columns"),
    [
        ("inbox_page", "sl", "$2::text[]", ("audience",)),
        ("inbox_count", "sl", "$2::text[]", ("audience",)),
        ("team_page", "sl", "$2::text[]", ("audience",)),
        ("team_count", "sl", "$2::text[]", ("audience",)),
        ("board_page_for", "x", "$4::text[]", ("audience", "delegates")),
        ("board_count_for", "x", "$4::text[]", ("audience", "delegates")),
        ("claims.claim_next_plain", "sl", "$2::text[]", ("audience",)),
        ("claims.claim_next", "sl", "$2::text[]", ("audience",)),
        ("claims.claim_next_bare", "sl", "$2::text[]", ("audience",)),
    ],
)
def test_the_written_out_candidate_rule_is_candidacy_admits_sql(
    statement: str, alias: str, keys: str, columns: tuple[str, ...]
) -> None:
    """The lists and claim-next spell the predicate out (static statements); it is the one
    every claim uses."""
    module, _, name = statement.rpartition(".")
    text = _squash((claims.SQL if module == "claims" else queries.SQL)[name])
    for column in columns:
        assert _squash(candidacy.admits_sql(alias, keys, column=column)) in text


def test_a_wrapped_fragment_takes_composed_text_only_where_it_says() -> None:
    st = Statement("SELECT 1 FROM run r WHERE true/*:where*/", "me")
    inner = st.any_of([[("reach_holder", ("me",))], [("reach_delegate", (["k"],))]])
    st.where_text(st.wrapped("run_reached_through_slot", inner))
    text, args = st.build()
    assert text.endswith(
        " AND EXISTS (SELECT 1 FROM slot x WHERE x.run = r.id AND "
        "((x.holder = $2) OR (x.delegates && $3::text[])))"
    )
    assert args == ["me", "me", ["k"]]
    with pytest.raises(BuildError, match="no /\\*:inner"):
        st.wrapped("reach_holder", "true", "me")
    assert st.any_of([]) == "false"


def test_claim_next_takes_its_facts_and_filters_as_parameters() -> None:
    """The catalog's facts travel as parameters too: the statement's text is one per filter
    shape, whatever the catalog or the principal."""
    f = SlotFilter(workflow=EVIL, priority_at_most=2)
    facts = ClaimFacts((f"wf 1 s {EVIL}",), (f"wf 1 s {EVIL} r1",))
    now = datetime(2026, 12, 1, tzinfo=UTC)
    text, args = claims.claim_next_plain_statement("me", [EVIL], f, now, facts)
    assert "DROP" not in text
    assert args == ["me", [EVIL], now, f"\nM wf 1 s {EVIL}\nR wf 1 s {EVIL} r1\n", EVIL, 2]
    other, _ = claims.claim_next_plain_statement("you", ["k"], f, now, ClaimFacts((), ()))
    assert other == text
    for context in (True, False):
        text, args = claims.claim_next_statement("me", [EVIL], f, now, context=context)
        assert "DROP" not in text
        assert args == ["me", [EVIL], now, EVIL, 2]
        assert max(int(n) for n in re.findall(r"\$(\d+)", text)) == len(args)


def test_the_day_rows_carry_as_many_pieces_as_cum_at_reads() -> None:
    """``calendar_days.sql`` writes the day's pieces out; ``cum_at`` reads PIECES of them."""
    text = calendar_days.ctes("$1::text[]", "$2::timestamptz", "$3::timestamptz")
    for k in range(1, calendar_days.PIECES + 1):
        assert f"AS s{k}" in text
        assert f"AS e{k}" in text
        assert f"{calendar_days.DAY_US}" in text
    assert f"AS s{calendar_days.PIECES + 1}" not in text
    assert "/*:" not in text


@pytest.mark.parametrize("digest", [None, "d1"])
def test_claim_next_reuses_its_text_per_shape_and_numbers_the_same_values(
    digest: str | None,
) -> None:
    """A statement's text is composed once per shape (with and without the caller's digest):
    what a later call sends is what composing it afresh gives, its own values as parameters."""
    facts = ClaimFacts(("wf 1 s a",), ("wf 1 s a r1",))
    now = datetime(2026, 12, 1, tzinfo=UTC)
    built = claims.claim_next_plain_statement("me", ["k"], SlotFilter(), now, facts, digest)
    again = claims.claim_next_plain_statement("you", [EVIL], SlotFilter(), now, facts, digest)
    assert again[0] is built[0]
    tail = [] if digest is None else ["you", digest]
    assert again[1] == ["you", [EVIL], now, "\nM wf 1 s a\nR wf 1 s a r1\n", *tail]
    assert max(int(n) for n in re.findall(r"\$(\d+)", again[0])) == len(again[1])
    assert (digest is not None) == ("md5(pr::text) = $6" in again[0])
