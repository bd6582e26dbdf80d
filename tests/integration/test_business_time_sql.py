"""business_us() in SQL agrees with Calendar.elapsed to the microsecond, across years and grows."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

import pytest

from taskflow.service.common.container import Services
from taskflow.store.clocks import business_sql, business_time, calendar_days

pytestmark = pytest.mark.anyio
INLINE = business_sql.business_us("c", "a", "b")
# The report's day rows, for instants inside [$4, $5] (outside: the lookup takes over).
BY_DAY = f"""WITH {calendar_days.ctes("$6::text[]", "$4::timestamptz", "$5::timestamptz")}
SELECT {calendar_days.business_at("x.c", "x.a", "x.a_us", "x0", "x.b", "x.b_us", "x1")} AS us
FROM (SELECT c, a, b, n, {business_sql.epoch_us("a")} AS a_us, {business_sql.epoch_us("b")} AS b_us
      FROM unnest($1::text[], $2::timestamptz[], $3::timestamptz[]) WITH ORDINALITY u(c, a, b, n)) x
{calendar_days.join("x0", "x.c", "x.a_us")} {calendar_days.join("x1", "x.c", "x.b_us")}
ORDER BY x.n"""

CALENDARS = ["uk-london", "us-new-york", "de-berlin", "support-overnight", "24x7", "in-bengaluru"]


def _random_instant(rng: random.Random, first: int, stop: int) -> datetime:
    lo = datetime(first, 1, 1, tzinfo=UTC).timestamp()
    hi = datetime(stop, 1, 1, tzinfo=UTC).timestamp()
    return datetime.fromtimestamp(rng.uniform(lo, hi), UTC).replace(
        microsecond=rng.randrange(1_000_000)
    )


async def test_business_us_agrees_with_calendar_elapsed(services: Services) -> None:
    cals = [services.calendars.get(n) for n in CALENDARS]
    # Grown twice (forwards, then backwards): counts must stay comparable across the seams.
    await business_time.ensure(services.db, cals, 2026, 2027)
    await business_time.ensure(services.db, cals, 2026, 2029)
    await business_time.ensure(services.db, cals, 2024, 2029)
    rng = random.Random(8)
    cases = []
    for _ in range(400):
        cal = rng.choice(cals)
        t0 = _random_instant(rng, 2024, 2029)
        t1 = t0 + timedelta(seconds=rng.choice([0, 60, 3600 * 5, 86400 * 3, 86400 * 400]))
        t1 = min(t1, datetime(2028, 12, 30, tzinfo=UTC))
        cases.append((cal, t0, t1))
    async with services.db.connection() as conn:
        # The SQL function, and the same expression inlined as the report statement uses it.
        rows = await conn.fetch(
            f"SELECT business_us(c, a, b) AS us, {INLINE} AS inline FROM unnest($1::text[], "
            "$2::timestamptz[], $3::timestamptz[]) WITH ORDINALITY x(c, a, b, n) ORDER BY n",
            [c.name for c, _, _ in cases],
            [a for _, a, _ in cases],
            [b for _, _, b in cases],
        )
        by_day = await conn.fetch(
            BY_DAY,
            [c.name for c, _, _ in cases],
            [a for _, a, _ in cases],
            [b for _, _, b in cases],
            datetime(2025, 6, 1, tzinfo=UTC),
            datetime(2027, 6, 1, tzinfo=UTC),
            CALENDARS,
        )
        real = await conn.fetchval(
            "SELECT business_us(NULL, '2026-03-29T00:30:00+00', '2026-03-29T02:30:00+00')"
        )
    for (cal, t0, t1), row, day in zip(cases, rows, by_day, strict=True):
        expected = cal.elapsed(t0, t1) // timedelta(microseconds=1)
        assert row["us"] == row["inline"] == day["us"] == expected, (cal.name, t0, t1)
    assert real == 2 * 3600 * 1_000_000


async def test_ensure_is_idempotent_and_rebuilds_a_changed_calendar(services: Services) -> None:
    uk = services.calendars.get("uk-london")
    await business_time.ensure(services.db, [uk], 2026, 2028)
    async with services.db.connection() as conn:
        count = await conn.fetchval("SELECT count(*) FROM calendar_interval")
        await business_time.ensure(services.db, [uk], 2026, 2027)
        assert await conn.fetchval("SELECT count(*) FROM calendar_interval") == count
        # Another definition under the same name (an edited file) starts over.
        await conn.execute("UPDATE calendar_span SET digest = 'old'")
        await business_time.ensure(services.db, [uk], 2026, 2028)
        assert await conn.fetchval("SELECT count(*) FROM calendar_interval") == count


async def test_day_rows_of_a_window_starting_mid_day(services: Services) -> None:
    # The window opens at 13:00Z on a Tuesday, after de-berlin's morning piece (07:00-11:00Z)
    # ended: the first day's row must still count that piece before the later instants.
    cals = [services.calendars.get(n) for n in CALENDARS]
    await business_time.ensure(services.db, cals, 2025, 2027)
    lo = datetime(2026, 3, 3, 13, tzinfo=UTC)
    cases = [
        (cal, lo + timedelta(hours=h0), lo + timedelta(hours=h1))
        for cal in cals
        for h0, h1 in [(0, 1), (0.5, 20), (2, 45), (0, 72), (3.25, 3.5)]
    ]
    async with services.db.connection() as conn:
        by_day = await conn.fetch(
            BY_DAY,
            [c.name for c, _, _ in cases],
            [a for _, a, _ in cases],
            [b for _, _, b in cases],
            lo,
            lo + timedelta(days=10),
            CALENDARS,
        )
    for (cal, t0, t1), day in zip(cases, by_day, strict=True):
        assert day["us"] == cal.elapsed(t0, t1) // timedelta(microseconds=1), (cal.name, t0, t1)
