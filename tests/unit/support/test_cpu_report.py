"""tests/support/cpu_report: which test a process belongs to, and the CPU it is charged."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.support.cpu_report import CLOCK_TICKS, Sampler, owning_test, split, stat_fields

pytestmark = pytest.mark.unit


def test_a_process_belongs_to_the_test_in_its_environment_whatever_the_phase() -> None:
    environ = b"PATH=/bin\0PYTEST_CURRENT_TEST=tests/local/test_x.py::test_y[a b] (setup)\0"
    assert owning_test(environ) == "tests/local/test_x.py::test_y[a b]"
    assert owning_test(b"PATH=/bin\0HOME=/root\0") is None


def test_a_stat_line_gives_name_cpu_and_start_even_with_spaces_in_the_name() -> None:
    line = "42 (Thread (pool) 1) S 1 42 42 0 -1 4194560 10 0 0 0 7 5 0 0 20 0 9 0 1234 0 0"
    assert stat_fields(line) == ("Thread (pool) 1", 12, "1234")


def test_the_tests_are_told_from_the_rest() -> None:
    tests, rest = split({"tests/a.py::u": 1.0, "<minio>": 2.0, "tests/a.py::t": 3.0, "<idle>": 0})
    assert list(tests.items()) == [("tests/a.py::t", 3.0), ("tests/a.py::u", 1.0)]
    assert rest == {"<minio>": 2.0}


def test_a_child_started_in_a_test_is_charged_to_it_and_older_processes_only_their_new_cpu(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    sampler = Sampler()
    monkeypatch.setenv("PYTEST_CURRENT_TEST", "tests/x.py::test_busy (call)")
    busy = "import time\nend = time.process_time() + 0.5\nwhile time.process_time() < end: pass"
    child = subprocess.Popen([sys.executable, "-c", busy + "\ntime.sleep(2)"])
    try:
        sampler.start()
        child.wait(30)
    finally:
        sampler.stop()
    charged = sampler.cpu_by_owner()
    assert 0.4 <= charged["tests/x.py::test_busy"] <= 2.0, charged
    # This process is older than the sampler: only what it spent since is charged.
    (mine,) = [p for (pid, _), p in sampler.processes.items() if pid == os.getpid()]
    assert mine.first_ticks > 0 and charged[mine.owner] < mine.ticks / CLOCK_TICKS
