"""bench/forecast.py runs and prints its ratio (a smoke run: small sizes, no timing asserted)."""

from __future__ import annotations

import sys

import pytest

from tests.benches import load


def test_the_bench_prints_both_and_the_ratio(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    bench = load("forecast")
    monkeypatch.setattr(sys, "argv", ["forecast.py", "--peers", "200", "--live", "20"])
    bench.main()
    printed = capsys.readouterr().out
    assert "forecast_many 20 live over 200 peers" in printed
    assert "ratio baseline / forecast_many" in printed
