"""Which test sessions use the local stack, and who stops it.

Several pytest processes can share one stack (`make test` runs two pytest-xdist workers,
a user may run a second session beside them). The first to find no stack starts it and
leaves a marker saying the tests own it; each registers itself (its pid and its session's
id, leftovers.SESSION_ENV); the last to leave stops it. A stack the tests did not start
(`make local-up`) is used and left running.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Final

from lakehouse.core.config import Settings

# In the stack's state folder while a test session that started the stack runs.
STARTED_MARKER: Final = "test-stack.started"
SESSIONS_FILE: Final = "test-stack.sessions"
LOCK_FILE: Final = "test-stack.lock"

Entry = tuple[int, str]  # (pid, session id)


@contextlib.contextmanager
def lock(settings: Settings) -> Iterator[None]:
    """One process at a time decides whether to start or stop the stack."""
    path = settings.state_dir / LOCK_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        yield


def started_marker(settings: Settings) -> Path:
    """The marker saying the tests started the stack (and may stop it)."""
    return settings.state_dir / STARTED_MARKER


def join(settings: Settings, session: str) -> None:
    """Register this process as a user of the stack; call under `lock`."""
    live = {e for e in _read(settings) if alive(e[0])}
    _write(settings, live | {(os.getpid(), session)})


def leave(settings: Settings, *, pid: int | None = None, session: str | None = None) -> bool:
    """Unregister `pid` (a fixture's teardown) or every process of `session` (an
    interrupted session, whose workers died without tearing down); if they were users, the
    tests started the stack and no live process uses it any more, stop it. True when it was
    stopped."""
    with lock(settings):
        entries = _read(settings)
        leaving = {e for e in entries if e[0] == pid or e[1] == session}
        staying = {e for e in entries - leaving if alive(e[0])}
        _write(settings, staying)
        marker = started_marker(settings)
        if not leaving or staying or not marker.exists():
            return False
        from lakehouse.local import stack as stack_module  # the project's, only when needed

        stack_module.down(settings)
        marker.unlink()
        return True


def _read(settings: Settings) -> set[Entry]:
    path = settings.state_dir / SESSIONS_FILE
    if not path.exists():
        return set()
    entries = set()
    for line in path.read_text().splitlines():
        pid, _, session = line.partition(" ")
        if pid.isdigit():
            entries.add((int(pid), session))
    return entries


def _write(settings: Settings, entries: set[Entry]) -> None:
    path = settings.state_dir / SESSIONS_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(f"{pid} {session}\n" for pid, session in sorted(entries)))


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
