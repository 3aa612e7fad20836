"""A pytest plugin: fail a session that ran longer than its time budget.

`make test` sets LAKEHOUSE_TEST_BUDGET_S for its end-to-end session (the measured warm
time plus the run-to-run noise, README *Budgets*), so a new test that costs minutes turns
the run red when it is added instead of the suite creeping past the budget unseen. Unset,
nothing is checked. The slowest tests are listed by --durations, which `make test` asks for.
"""

from __future__ import annotations

import os
import time
from typing import Final

import pytest

BUDGET_ENV: Final = "LAKEHOUSE_TEST_BUDGET_S"

_started = [0.0]


def over_budget(elapsed_s: float, budget_s: float | None) -> str | None:
    """The failure message when `elapsed_s` is past `budget_s`, else None."""
    if budget_s is None or elapsed_s <= budget_s:
        return None
    return (
        f"this session took {elapsed_s:.0f} s, over its budget of {budget_s:.0f} s "
        f"({BUDGET_ENV}): find the test that grew in the --durations list above and make it "
        "cheaper (share a job run, wait on the event instead of a sleep), or move it to "
        "make fault-test-long"
    )


def pytest_sessionstart(session: pytest.Session) -> None:
    _started[0] = time.monotonic()


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if hasattr(session.config, "workerinput"):
        return  # a pytest-xdist worker: the controller's session is the one timed
    raw = os.environ.get(BUDGET_ENV)
    message = over_budget(time.monotonic() - _started[0], float(raw) if raw else None)
    if message is None or exitstatus != 0:
        return
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None:
        reporter.write_line(f"FAILED time budget: {message}", red=True)
    session.exitstatus = pytest.ExitCode.TESTS_FAILED
