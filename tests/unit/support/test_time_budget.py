"""tests.support.time_budget: a session past its budget fails, with what to do."""

from __future__ import annotations

import pytest

from tests.support.time_budget import over_budget

pytestmark = pytest.mark.unit


def test_a_session_within_or_without_a_budget_passes() -> None:
    assert over_budget(100.0, None) is None
    assert over_budget(100.0, 100.0) is None


def test_a_session_over_its_budget_fails_naming_the_budget() -> None:
    message = over_budget(800.4, 720.0)
    assert message is not None
    assert "took 800 s, over its budget of 720 s (LAKEHOUSE_TEST_BUDGET_S)" in message
