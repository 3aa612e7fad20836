"""tests/support/leftovers.py with real, tiny processes."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from lakehouse.core.config import REPO_ROOT
from tests.support import leftovers

pytestmark = pytest.mark.unit

SLEEP = [sys.executable, "-c", "import time; time.sleep(30)"]


@pytest.fixture
def sleepers() -> Iterator[dict[str, subprocess.Popen[bytes]]]:
    """Processes as tests of two sessions, or no test, would have started them."""
    started = {}
    for name, session, test in [
        ("e2e", "s1", "tests/local/test_x.py::test_y (call)"),
        ("unit", "s1", "tests/unit/test_x.py::test_y (call)"),
        ("other session", "s2", "tests/local/test_x.py::test_y (setup)"),
        ("no test", "s1", None),
    ]:
        env = {**os.environ, leftovers.SESSION_ENV: session}
        env.pop("PYTEST_CURRENT_TEST", None)
        if test:
            env["PYTEST_CURRENT_TEST"] = test
        started[name] = subprocess.Popen(SLEEP, env=env)
    yield started
    for process in started.values():
        process.kill()
        process.wait()


def test_leftovers_are_what_the_sessions_end_to_end_tests_started(
    sleepers: dict[str, subprocess.Popen[bytes]],
) -> None:
    found = leftovers.started_by_tests("s1")
    assert sleepers["e2e"].pid in found
    assert {sleepers[n].pid for n in ("unit", "other session", "no test")}.isdisjoint(found)


def test_removing_them_kills_those_only(
    sleepers: dict[str, subprocess.Popen[bytes]], monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.support import stack_sessions

    left: list[str | None] = []
    monkeypatch.setattr(stack_sessions, "leave", lambda _, session: left.append(session))
    said: list[str] = []
    leftovers.remove_leftovers("s1", said.append)
    assert sleepers["e2e"].wait(10) == -9
    assert all(sleepers[n].poll() is None for n in ("unit", "other session", "no test"))
    assert left == ["s1"]
    assert said == ["== killed 1 process the interrupted tests had started"]


def test_a_process_with_an_environment_of_its_own_is_found_by_its_marks(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A service a test starts (the CDC part's PostgreSQL) gets a built environment, not
    os.environ: with `owner_marks()` in it, the session still finds it."""
    monkeypatch.setenv(leftovers.SESSION_ENV, "s3")
    monkeypatch.setenv("PYTEST_CURRENT_TEST", "tests/local/test_x.py::test_y (call)")
    marked = subprocess.Popen(SLEEP, env={"PATH": os.environ["PATH"], **leftovers.owner_marks()})
    bare = subprocess.Popen(SLEEP, env={"PATH": os.environ["PATH"]})
    try:
        found = leftovers.started_by_tests("s3")
        assert marked.pid in found
        assert bare.pid not in found
    finally:
        for process in (marked, bare):
            process.kill()
            process.wait()


def test_an_interrupted_session_removes_its_leftovers(tmp_path: Path) -> None:
    """A test started a process, then Ctrl-C (KeyboardInterrupt): the session kills it."""
    pid_file = tmp_path / "pid"
    (tmp_path / "test_interrupted.py").write_text(
        "import os, pathlib, subprocess\n"
        "def test_started_then_interrupted():\n"
        "    env = {**os.environ, 'PYTEST_CURRENT_TEST': 'tests/local/t.py::t (call)'}\n"
        f"    p = subprocess.Popen({SLEEP!r}, env=env, start_new_session=True)\n"
        f"    pathlib.Path({str(pid_file)!r}).write_text(str(p.pid))\n"
        "    raise KeyboardInterrupt\n"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT), "LAKEHOUSE_STATE": str(tmp_path / "state")}
    env.pop(leftovers.SESSION_ENV, None)
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "tests.support.leftovers",
            "-p",
            "no:cacheprovider",
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == pytest.ExitCode.INTERRUPTED, result.stdout + result.stderr
    assert gone(int(pid_file.read_text()))
    assert "== killed 1 process the interrupted tests had started" in result.stdout


def gone(pid: int, timeout_s: float = 10) -> bool:
    """Ended (a zombie waiting for its reaper counts)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            return True
        if state == "Z":
            return True
        time.sleep(0.1)
    return False
