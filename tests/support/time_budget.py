"""A pytest plugin: fail a session that ran longer than its time budget.

`make test` and `make test-all` set LAKEHOUSE_TEST_BUDGET_S for their end-to-end session
(the measured warm time plus the run-to-run noise, docs/performance.md), so a new test
that costs minutes turns the run red when it is added instead of the suite creeping past
the budget unseen. Unset, nothing is checked. The slowest tests are listed by --durations,
which both ask for.

The budget is in seconds of the machine it was measured on. The same machine runs the
same tests in half the time on one day and twice it on another (2,362 s on 2026-11-26,
1,017 and 1,238 s in earlier rehearsals, nothing else running any time; a single-threaded
CPU loop was as slow as the tests that day), so the budget is stretched by a
speed probe timed when the session starts and when it ends (the slower of the two, as the
machine may slow down during the run): a suite that grew fails, a slow day does not.
The probe only ever stretches the budget, never shortens it: in CI on 2026-11-26 it read
0.27 s at both ends of a session whose tests ran at the slow day's speed (2,297 s, the
slowest tests within 2 % of the 0.35 s day's), so a fast probe does not prove a fast run.
"""

from __future__ import annotations

import os
import time
from typing import Final

import pytest

BUDGET_ENV: Final = "LAKEHOUSE_TEST_BUDGET_S"

# speed_probe() on the machine and day the budget was measured (2026-11-26).
REFERENCE_PROBE_S: Final = 0.36

_started = [0.0]
_probes: list[float] = []


def speed_probe(repeats: int = 5) -> float:
    """Seconds a fixed single-threaded CPU loop takes here now, the fastest of `repeats`
    (the fastest is the least disturbed by whatever else ran)."""
    timings = []
    for _ in range(repeats):
        started = time.perf_counter()
        total = 0
        for i in range(3_000_000):
            total += i * i % 7
        timings.append(time.perf_counter() - started)
    return min(timings)


def stretched_budget(budget_s: float, probe_s: float) -> float:
    """The budget on a machine whose speed probe took `probe_s`: longer on a slower
    machine, never shorter than measured (a fast probe has come with a slow run)."""
    return budget_s * max(1.0, probe_s / REFERENCE_PROBE_S)


def over_budget(
    elapsed_s: float, budget_s: float | None, probe_s: float | None = None
) -> str | None:
    """The failure message when `elapsed_s` is past `budget_s` (stretched to this machine's
    speed when a probe was taken), else None."""
    if budget_s is None:
        return None
    allowed = budget_s if probe_s is None else stretched_budget(budget_s, probe_s)
    if elapsed_s <= allowed:
        return None
    speed = (
        ""
        if probe_s is None
        else f" (stretched from {budget_s:.0f} s by this machine's speed: probe {probe_s:.2f} s, "
        f"{REFERENCE_PROBE_S:.2f} s where the budget was measured)"
    )
    return (
        f"this session took {elapsed_s:.0f} s, over its budget of {allowed:.0f} s "
        f"({BUDGET_ENV}){speed}: find the test that grew in the --durations list above and "
        "make it cheaper (share a job run, wait on the event instead of a sleep), or, in make "
        "test, leave it to make test-all (tests/support/tiers.py)"
    )


def _is_xdist_worker(session: pytest.Session) -> bool:
    return hasattr(session.config, "workerinput")


def pytest_sessionstart(session: pytest.Session) -> None:
    _started[0] = time.monotonic()
    if os.environ.get(BUDGET_ENV) and not _is_xdist_worker(session):
        _probes.append(speed_probe())


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if _is_xdist_worker(session):
        return  # the controller's session is the one timed
    raw = os.environ.get(BUDGET_ENV)
    if not raw:
        return
    elapsed = time.monotonic() - _started[0]
    probe = max([*_probes, speed_probe()])
    message = over_budget(elapsed, float(raw), probe)
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None:
        reporter.write_line(
            f"time budget: {elapsed:.0f} s of {stretched_budget(float(raw), probe):.0f} s "
            f"({raw} s at the reference speed; speed probe {probe:.2f} s, "
            f"reference {REFERENCE_PROBE_S:.2f} s)"
        )
    if message is None or exitstatus != 0:
        return
    if reporter is not None:
        reporter.write_line(f"FAILED time budget: {message}", red=True)
    session.exitstatus = pytest.ExitCode.TESTS_FAILED
