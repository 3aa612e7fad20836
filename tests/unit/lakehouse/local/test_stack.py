"""Bringing the stack up and down with tiny fake services (lakehouse.local.stack)."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import sys
import time
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

from lakehouse.core.config import Settings, load_settings
from lakehouse.local import stack
from lakehouse.local.supervisor import ServiceError, ServiceSpec

pytestmark = pytest.mark.unit

SLEEP = [sys.executable, "-c", "import time; print('up', flush=True); time.sleep(30)"]


def spec(name: str, command: list[str], healthy: bool = True, timeout: float = 10) -> ServiceSpec:
    return ServiceSpec(
        name=name,
        command=command,
        env={},
        ports=(),
        url=f"probe://{name}",
        health=lambda: healthy,
        start_timeout_s=timeout,
    )


def gone(pid: int) -> bool:
    """Exited (a zombie counts: it waits only for its parent to reap it)."""
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] == "Z"


class FakeStack:
    """`up` with the given specs instead of the real services, and no bootstrap."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.specs: list[ServiceSpec] = []
        self.bootstrapped: list[Mapping[str, str]] = []
        self.messages: list[str] = []

    def up(self, *specs: ServiceSpec) -> float:
        self.specs = list(specs)
        return stack.up(self.settings, self.messages.append)

    def pids(self) -> dict[str, int]:
        """Every process `up` started, from its progress messages."""
        found = (re.search(r"(\S+): started \(pid (\d+)\)", m) for m in self.messages)
        return {m[1]: int(m[2]) for m in found if m}

    def log(self, name: str) -> str:
        return str(stack.supervisor_for(self.settings).log_file(name))


@pytest.fixture
def fake(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeStack]:
    monkeypatch.setenv("LAKEHOUSE_STATE", str(tmp_path / "state"))
    monkeypatch.setenv("LAKEHOUSE_CACHE", str(tmp_path / "cache"))
    settings = load_settings(environ={})
    assert settings.state_dir == tmp_path / "state"
    fake = FakeStack(settings)
    monkeypatch.setattr(stack, "build_specs", lambda _settings, _progress: fake.specs)
    monkeypatch.setattr(
        stack.bootstrap, "bootstrap", lambda env, progress: fake.bootstrapped.append(env)
    )
    yield fake
    # Whatever the test did, nothing it started is left running.
    supervisor = stack.supervisor_for(settings)
    for s in fake.specs:
        supervisor.stop(s.name, timeout_s=2)
    for pid in fake.pids().values():
        if not gone(pid):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pid, signal.SIGKILL)


def wait_gone(pid: int, timeout_s: float = 5) -> bool:
    deadline = time.monotonic() + timeout_s
    while not gone(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def test_a_service_that_exits_fails_up_naming_it_and_its_log(fake: FakeStack) -> None:
    broken = [sys.executable, "-c", "print('boom: bad config'); raise SystemExit(3)"]
    with pytest.raises(ServiceError) as raised:
        fake.up(spec("steady", SLEEP), spec("broken", broken, healthy=False))
    message = str(raised.value)
    assert "broken exited with code 3" in message
    assert fake.log("broken") in message
    assert "boom: bad config" in message
    # The healthy service was stopped again, and nothing was bootstrapped.
    assert wait_gone(fake.pids()["steady"])
    assert stack.supervisor_for(fake.settings).status("steady").state == "stopped"
    assert fake.bootstrapped == []


def test_a_service_that_never_gets_healthy_fails_up_and_is_stopped(fake: FakeStack) -> None:
    with pytest.raises(ServiceError) as raised:
        fake.up(spec("steady", SLEEP), spec("sleepy", SLEEP, healthy=False, timeout=1))
    message = str(raised.value)
    assert "sleepy did not become healthy within 1s" in message
    assert fake.log("sleepy") in message
    pids = fake.pids()
    assert set(pids) == {"steady", "sleepy"}
    assert all(wait_gone(pid) for pid in pids.values())
    assert fake.bootstrapped == []


def test_up_bootstraps_once_all_are_healthy_and_down_stops_them(fake: FakeStack) -> None:
    # Names of real services, so that statuses and down look at them.
    seconds = fake.up(spec("minio", SLEEP), spec("kinesis", SLEEP))
    assert seconds > 0
    assert fake.bootstrapped == [fake.settings.service_env()]
    states = {row.name: row.state for row in stack.statuses(fake.settings)}
    assert states["minio"] == states["kinesis"] == "running"
    assert states["trino"] == "stopped"
    assert sorted(stack.down(fake.settings, lambda _: None)) == ["kinesis", "minio"]
    assert all(wait_gone(pid) for pid in fake.pids().values())
