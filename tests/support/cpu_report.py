"""A pytest plugin: where the session's CPU went, test by test, listed at its end.

The end-to-end suite runs on two cores that its two pytest-xdist workers keep busy, so its
wall time follows its CPU: a test is made cheaper by cutting its CPU, and this says where
the CPU goes. Every process the machine runs is sampled once a second (/proc); a process
belongs to the test during which it was started (pytest puts the test's id in
PYTEST_CURRENT_TEST, which the processes a test starts inherit: its job's JVM, notebook
kernels, a CDC service), however it ends (killed, orphaned or waited for). Processes
started otherwise (the stack's services, pytest itself, the kernel) are summed by name.
A process that lives less than a sample may be missed. Asked for with `--cpu-report=N`
(the N costliest tests; `make test` asks for 15); only the controlling process samples.
"""

from __future__ import annotations

import os
import re
import threading
from collections import defaultdict
from dataclasses import dataclass
from typing import Final

import pytest

CLOCK_TICKS: Final = os.sysconf("SC_CLK_TCK")
TEST_VARIABLE: Final = b"PYTEST_CURRENT_TEST="
SAMPLE_EVERY_S: Final = 1.0


@dataclass
class Process:
    test: str | None  # the test that started it, if one did
    name: str  # when last seen (a process that execs another program changes it)
    first_ticks: int  # CPU when first seen (for a process older than the session)
    ticks: int  # CPU when last seen

    @property
    def owner(self) -> str:
        """The test's id, or "<name>" for a process no test started."""
        return self.test or f"<{self.name}>"


def owning_test(environ: bytes) -> str | None:
    """The test id (phase left out) in a process's /proc/<pid>/environ, if any."""
    for entry in environ.split(b"\0"):
        if entry.startswith(TEST_VARIABLE):
            value = entry[len(TEST_VARIABLE) :].decode(errors="replace")
            return re.sub(r" \((setup|call|teardown)\)$", "", value)
    return None


def stat_fields(stat: str) -> tuple[str, int, str]:
    """(name, user + system ticks, start time) from a /proc/<pid>/stat line."""
    name = stat[stat.index("(") + 1 : stat.rindex(")")]
    fields = stat.rsplit(")", 1)[1].split()
    # After the name: state (3rd field of the line), ..., utime 14th, stime 15th, start 22nd.
    return name, int(fields[11]) + int(fields[12]), fields[19]


class Sampler:
    def __init__(self) -> None:
        self.processes: dict[tuple[int, str], Process] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="cpu-report", daemon=True)
        self._sample(at_start=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(5)
        self._sample(at_start=False)

    def _run(self) -> None:
        while not self._stop.wait(SAMPLE_EVERY_S):
            self._sample(at_start=False)

    def _sample(self, at_start: bool) -> None:
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                with open(f"/proc/{entry}/stat") as stat:
                    name, ticks, started = stat_fields(stat.read())
                key = (int(entry), started)
                known = self.processes.get(key)
                if known is None:
                    self.processes[key] = self._first_sight(entry, name, ticks, at_start)
                else:
                    known.ticks, known.name = max(known.ticks, ticks), name
            except (OSError, ValueError, IndexError):  # gone meanwhile, or not ours to read
                continue

    @staticmethod
    def _first_sight(pid: str, name: str, ticks: int, at_start: bool) -> Process:
        try:
            with open(f"/proc/{pid}/environ", "rb") as environ:
                test = owning_test(environ.read())
        except OSError:
            test = None
        # A process older than the session counts only what it spends from now on.
        return Process(test, name, ticks if at_start else 0, ticks)

    def cpu_by_owner(self) -> dict[str, float]:
        totals: dict[str, float] = defaultdict(float)
        for process in self.processes.values():
            totals[process.owner] += (process.ticks - process.first_ticks) / CLOCK_TICKS
        return totals


def split(totals: dict[str, float]) -> tuple[dict[str, float], dict[str, float]]:
    """(the tests' CPU, the rest's by process name), each costliest first."""
    ranked = sorted(totals.items(), key=lambda item: -item[1])
    tests = {k: v for k, v in ranked if not k.startswith("<")}
    rest = {k: v for k, v in ranked if k.startswith("<") and v > 0}
    return tests, rest


_sampler: list[Sampler] = []


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--cpu-report",
        type=int,
        default=0,
        metavar="N",
        help="list the N tests whose processes spent the most CPU, and the rest's CPU",
    )


def _controls(config: pytest.Config) -> bool:
    return bool(config.getoption("--cpu-report")) and not hasattr(config, "workerinput")


def pytest_sessionstart(session: pytest.Session) -> None:
    if _controls(session.config):
        _sampler.append(Sampler())
        _sampler[0].start()


def pytest_terminal_summary(
    terminalreporter: pytest.TerminalReporter, config: pytest.Config
) -> None:
    if not _sampler:
        return
    sampler = _sampler.pop()
    sampler.stop()
    tests, rest = split(sampler.cpu_by_owner())
    count = config.getoption("--cpu-report")
    write = terminalreporter.write_line
    terminalreporter.section(
        f"the {count} tests that spent the most CPU (setup included, with their processes)"
    )
    for test, cpu in list(tests.items())[:count]:
        write(f"{cpu:7.1f} CPU-s  {test}")
    others = ", ".join(f"{name[1:-1]} {cpu:.0f}" for name, cpu in list(rest.items())[:6])
    write(
        f"the {len(tests)} tests that started processes: {sum(tests.values()):.0f} CPU-s; "
        "processes no test "
        f"started (the stack's services, pytest, the system): {sum(rest.values()):.0f} CPU-s "
        f"({others})"
    )
