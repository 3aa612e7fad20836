"""A pytest plugin: what an interrupted test session leaves running is removed.

Ctrl-C on `pytest -n 2 -m local` stops pytest-xdist's workers without tearing their
fixtures down, and the end-to-end tests start jobs, Spark clusters and servers in sessions
of their own: they ran on, holding ports, the checkpoint's writer lock and the stack.
Each session gets an id (SESSION_ENV, inherited by its workers and everything its tests
start); when the session ends interrupted, its controller SIGKILLs every process that
carries that id and was started by an end-to-end test (PYTEST_CURRENT_TEST=tests/local/...,
which pytest sets while a test runs), then stops the stack if the session's tests started
it and no other session uses it (tests/support/stack_sessions.py). `make test`'s runner
(tests/support/side_by_side.py) calls the same removal after stopping its session.
"""

from __future__ import annotations

import contextlib
import os
import signal
import uuid
from collections.abc import Callable, Generator
from pathlib import Path
from typing import Final

import pytest

from tests.support.cpu_report import owning_test

SESSION_ENV: Final = "LAKEHOUSE_TEST_SESSION"
E2E_TESTS: Final = "tests/local/"


def owner_marks() -> dict[str, str]:
    """The variables that tie a process to this session and the test that started it, for
    processes started with an environment of their own (a service's, not os.environ's):
    without them an interrupted session cannot find them, nor the CPU report charge them."""
    names = (SESSION_ENV, "PYTEST_CURRENT_TEST")  # the second: set by pytest
    return {name: os.environ[name] for name in names if name in os.environ}


def started_by_tests(session: str) -> list[int]:
    """Live processes of `session` that an end-to-end test started (this one excluded)."""
    mark = f"{SESSION_ENV}={session}".encode()
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            environ = (entry / "environ").read_bytes()
        except OSError:  # gone, or not ours to read
            continue
        if mark in environ.split(b"\0") and (owning_test(environ) or "").startswith(E2E_TESTS):
            pids.append(int(entry.name))
    return pids


def kill_leftovers(session: str, say: Callable[[str], None] = print) -> None:
    """SIGKILL what `session`'s end-to-end tests started."""
    killed = started_by_tests(session)
    for pid in killed:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    if killed:
        plural = "es" if len(killed) > 1 else ""
        say(f"== killed {len(killed)} process{plural} the interrupted tests had started")


def remove_leftovers(session: str, say: Callable[[str], None] = print) -> None:
    """`kill_leftovers`, then stop the stack if the session's tests started it and no other
    session uses it."""
    kill_leftovers(session, say)
    from lakehouse.core.config import load_settings  # the project's, only when needed
    from tests.support import stack_sessions

    if stack_sessions.leave(load_settings(), session=session):
        say("== stopped the stack the interrupted tests had started")


def _is_worker(config: pytest.Config) -> bool:
    return hasattr(config, "workerinput")


def pytest_configure(config: pytest.Config) -> None:
    # Kept when set: make test's runner names the session it starts, to clean up after it.
    if not _is_worker(config):
        os.environ.setdefault(SESSION_ENV, uuid.uuid4().hex)


@pytest.hookimpl(wrapper=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> Generator[None]:
    interrupted = exitstatus == pytest.ExitCode.INTERRUPTED and not _is_worker(session.config)
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    say = reporter.write_line if reporter else print
    if interrupted:  # first: before a one-process session tears its fixtures (the stack) down
        kill_leftovers(os.environ[SESSION_ENV], say)
    yield
    if interrupted:  # last: after pytest-xdist has shut its workers down
        remove_leftovers(os.environ[SESSION_ENV], say)
