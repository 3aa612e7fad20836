"""tests/support/stack_sessions.py: who uses the tests' stack, and who stops it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from lakehouse.core.config import Settings
from tests.support import stack_sessions

pytestmark = pytest.mark.unit


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(versions={}, env={}, cache_dir=tmp_path / "cache", state_dir=tmp_path)


@pytest.fixture
def downs(monkeypatch: pytest.MonkeyPatch) -> list[Settings]:
    """Calls of lakehouse.local.stack.down, which is not run."""
    from lakehouse.local import stack as stack_module

    calls: list[Settings] = []
    monkeypatch.setattr(stack_module, "down", calls.append)
    return calls


def dead_pid() -> int:
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return process.pid


def started(settings: Settings) -> None:
    stack_sessions.started_marker(settings).touch()


def test_the_last_user_to_leave_stops_the_stack_the_tests_started(
    settings: Settings, downs: list[Settings]
) -> None:
    started(settings)
    stack_sessions.join(settings, "a")
    assert stack_sessions.leave(settings, pid=os.getpid())
    assert downs == [settings]
    assert not stack_sessions.started_marker(settings).exists()


def test_a_stack_the_tests_did_not_start_is_left_running(
    settings: Settings, downs: list[Settings]
) -> None:
    stack_sessions.join(settings, "a")
    assert not stack_sessions.leave(settings, pid=os.getpid())
    assert downs == []


def test_a_live_user_of_another_session_keeps_the_stack(
    settings: Settings, downs: list[Settings]
) -> None:
    """An interrupted session's workers are dead; another session's live process stays."""
    started(settings)
    with open(settings.state_dir / stack_sessions.SESSIONS_FILE, "w") as entries:
        entries.write(f"{dead_pid()} interrupted\n{dead_pid()} interrupted\n{os.getpid()} other\n")
    assert not stack_sessions.leave(settings, session="interrupted")
    assert downs == []
    assert stack_sessions.leave(settings, session="other")
    assert downs == [settings]


def test_a_session_that_never_used_the_stack_does_not_stop_it(
    settings: Settings, downs: list[Settings]
) -> None:
    """Ctrl-C on the unit tests beside a stack a dead end-to-end session left."""
    started(settings)
    assert not stack_sessions.leave(settings, session="unit")
    assert downs == []


def test_dead_users_are_forgotten_when_one_joins(settings: Settings) -> None:
    (settings.state_dir / stack_sessions.SESSIONS_FILE).write_text(f"{dead_pid()} old\n")
    stack_sessions.join(settings, "new")
    text = (settings.state_dir / stack_sessions.SESSIONS_FILE).read_text()
    assert text == f"{os.getpid()} new\n"
