"""tests.support.time_budget: a session past its budget fails, with what to do; the
budget follows the machine's speed."""

from __future__ import annotations

import pytest

from tests.support.time_budget import REFERENCE_PROBE_S, over_budget, speed_probe, stretched_budget

pytestmark = pytest.mark.unit


def test_a_session_within_or_without_a_budget_passes() -> None:
    assert over_budget(100.0, None) is None
    assert over_budget(100.0, 100.0) is None


def test_a_session_over_its_budget_fails_naming_the_budget() -> None:
    message = over_budget(800.4, 720.0)
    assert message is not None
    assert "took 800 s, over its budget of 720 s (LAKEHOUSE_TEST_BUDGET_S)" in message


def test_a_machine_half_as_fast_gets_twice_the_time() -> None:
    slow = 2 * REFERENCE_PROBE_S
    assert stretched_budget(1000.0, slow) == pytest.approx(2000.0)
    assert over_budget(1900.0, 1000.0, slow) is None
    message = over_budget(2100.0, 1000.0, slow)
    assert message is not None
    assert "over its budget of 2000 s" in message and "stretched from 1000 s" in message


def test_a_fast_probe_does_not_shorten_the_budget() -> None:
    fast = REFERENCE_PROBE_S / 2
    assert stretched_budget(1000.0, fast) == pytest.approx(1000.0)
    assert over_budget(900.0, 1000.0, fast) is None
    assert over_budget(1100.0, 1000.0, fast) is not None


def test_the_speed_probe_times_its_loop() -> None:
    assert 0.0 < speed_probe(repeats=1) < 60.0
