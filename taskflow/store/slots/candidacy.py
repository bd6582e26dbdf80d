"""A slot's whole candidate rule as ONE SQL predicate over a principal's keys.

A slot stores its compiled audience (``core/definition/audience.py``) in three
columns (``store/runs.split_audience``): ``audience`` (any of these keys),
``deny`` (none of these keys) and ``residual`` (the other rules, as the JSON of
:meth:`Rule.to_json`). :func:`admits_sql` is the one expression every list
and claim uses (inbox, claim-next, the team queue of ``work``, the board), so
a page and its count agree with what ``claim`` and ``complete`` accept.

The residual rules are evaluated by the SQL function ``residual_admits``
(three-valued like :meth:`Rule.holds`: an ``unknown`` term never passes),
called only for rows that carry some beyond a single key: most slots have
none, a single key is read inline, and the cheap array tests run first
(``bench/candidacy.py`` measures it against the keys-only predicate). A
property test (``tests/integration/test_candidacy_sql.py``) checks that the
predicate agrees with :meth:`Audience.admits` on generated rules and key sets,
evaluated by PostgreSQL.
"""

from __future__ import annotations

from typing import Final

#: ``rule_holds(rule, keys)``: one residual rule, NULL when it cannot be decided (a
#: subject field was missing); ``residual_admits(rules, keys)``: every rule holds.
FUNCTIONS: Final[tuple[tuple[str, str], ...]] = (
    # Loops index the JSON arrays (simple expressions, no SPI query per loop) and plain
    # keys are read inline (no nested call): several times faster per row than
    # iterating over jsonb_array_elements and recursing on every term.
    (
        "rule_holds",
        "CREATE FUNCTION rule_holds(rule jsonb, keys text[]) RETURNS boolean "
        "LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$ "
        "DECLARE parts jsonb; part jsonb; r boolean; undecided boolean := false; "
        "BEGIN "
        "IF rule ? 'key' THEN RETURN (rule->>'key') = ANY(keys); END IF; "
        "IF rule ? 'unknown' THEN RETURN NULL; END IF; "
        "IF rule ? 'not' THEN RETURN NOT rule_holds(rule->'not', keys); END IF; "
        "parts := coalesce(rule->'all', rule->'any'); "
        "FOR i IN 0 .. jsonb_array_length(parts) - 1 LOOP "
        "part := parts->i; "
        "IF part ? 'key' THEN r := (part->>'key') = ANY(keys); "
        "ELSE r := rule_holds(part, keys); END IF; "
        "IF r IS NULL THEN undecided := true; "
        "ELSIF r <> (rule ? 'all') THEN RETURN r; END IF; "
        "END LOOP; "
        "RETURN CASE WHEN undecided THEN NULL ELSE rule ? 'all' END; "
        "END $$",
    ),
    (
        "residual_admits",
        "CREATE FUNCTION residual_admits(rules jsonb, keys text[]) RETURNS boolean "
        "LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE COST 200 AS $$ "
        "DECLARE part jsonb; "
        "BEGIN "
        "FOR i IN 0 .. jsonb_array_length(rules) - 1 LOOP "
        "part := rules->i; "
        "IF part ? 'key' THEN "
        "IF NOT (part->>'key') = ANY(keys) THEN RETURN false; END IF; "
        "ELSIF rule_holds(part, keys) IS NOT TRUE THEN RETURN false; END IF; "
        "END LOOP; "
        "RETURN true; "
        "END $$",
    ),
)


def admits_sql(alias: str, keys: str, *, column: str = "audience") -> str:
    """SQL: the rule in columns ``column``, ``deny``, ``residual`` of ``alias`` admits ``keys``.

    ``keys`` is SQL for the principal's keys (a ``text[]`` parameter, e.g. ``$2::text[]``).
    ``column="delegates"`` reads the delegates' rule (``delegates_deny``,
    ``delegates_residual``) instead of the candidates'.
    """
    deny, residual = (
        ("deny", "residual") if column == "audience" else (f"{column}_deny", f"{column}_residual")
    )
    r = f"{alias}.{residual}"
    # Most slots have no residual rule; the most common one is a single key (``role & group``
    # compiles to the group's key plus the residual ``role:...``): both are decided inline,
    # the rest by the SQL function.
    return (
        f"({alias}.{column} && {keys} AND NOT {alias}.{deny} && {keys}"
        f" AND ({r} = '[]'::jsonb OR CASE WHEN jsonb_array_length({r}) = 1 AND {r}->0 ? 'key'"
        f" THEN ({r}->0->>'key') = ANY({keys}) ELSE residual_admits({r}, {keys}) END))"
    )
