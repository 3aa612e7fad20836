"""The Locust command line and stopping Locust's process group (loadgen.runner)."""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from loadgen import options, runner
from loadgen.options import LoadOptions
from loadgen.runner import build_command, stop

pytestmark = pytest.mark.unit


def value(command: list[str], flag: str) -> str:
    return command[command.index(flag) + 1]


def test_headless_command() -> None:
    command = build_command(
        LoadOptions(workers=3, users=6, run_time="2m", master_port=6000), "/x/locustfile.py"
    )
    assert command[:5] == [sys.executable, "-m", "locust", "-f", "/x/locustfile.py"]
    assert value(command, "--processes") == "3"
    assert value(command, "-u") == "6"
    assert value(command, "-r") == "6"  # spawn_rate 0: all at once
    assert value(command, "--master-bind-host") == "127.0.0.1"
    assert value(command, "--master-bind-port") == value(command, "--master-port") == "6000"
    assert "--headless" in command
    assert value(command, "--run-time") == "2m"
    assert value(command, "--stop-timeout") == "30s"
    assert "--web-host" not in command and "--autostart" not in command


def test_web_command_runs_until_stopped_without_run_time() -> None:
    command = build_command(
        LoadOptions(web=True, web_host="0.0.0.0", web_port=9000, run_time="", spawn_rate=2.5)
    )
    assert "--headless" not in command
    assert value(command, "--web-host") == "0.0.0.0"
    assert value(command, "--web-port") == "9000"
    assert value(command, "-r") == "2.5"
    assert "--autostart" not in command and "--run-time" not in command


def test_web_command_with_run_time_starts_and_quits_by_itself() -> None:
    command = build_command(LoadOptions(web=True, run_time="30s"))
    assert "--autostart" in command
    assert value(command, "--autoquit") == "5"
    assert value(command, "--run-time") == "30s"


def test_user_options_are_passed_as_flags_that_parse_back() -> None:
    opts = LoadOptions(
        stream_name="s1", events_per_sec=12.5, batch_size=7, event_model="mix", seed=""
    )
    command = build_command(opts)
    assert command[-len(opts.user_args()) :] == opts.user_args()
    parser = argparse.ArgumentParser()
    options.add_arguments(parser)
    parsed = options.from_namespace(parser.parse_args(opts.user_args()))
    assert parsed == opts


# A process standing in for Locust's master: the leader of its own group, it starts a
# child (a forked worker), prints the child's PID once both are ready, and sleeps. Modes:
# "forwards": on SIGTERM it stops the child, then exits 0 (what Locust's master does);
# "stubborn": both ignore SIGTERM; "dies": it dies of SIGTERM and leaves the child.
PARENT = textwrap.dedent(
    """
    import signal, subprocess, sys, time
    mode = sys.argv[1]
    if mode == "stubborn":  # inherited by the child, also across exec
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    child = subprocess.Popen(
        [sys.executable, "-c", "import time; print(1, flush=True); time.sleep(30)"],
        stdout=subprocess.PIPE,
    )
    if mode == "forwards":
        def quit(signum, frame):
            child.terminate()
            child.wait()
            sys.exit(0)
        signal.signal(signal.SIGTERM, quit)
    child.stdout.readline()
    print(child.pid, flush=True)
    time.sleep(30)
    """
)


def gone(pid: int) -> bool:
    """Exited (a zombie counts: it waits only for its parent to reap it)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] == "Z"


def wait_gone(pid: int, timeout_s: float = 5) -> bool:
    deadline = time.monotonic() + timeout_s
    while not gone(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


@pytest.fixture
def group() -> Iterator[list[subprocess.Popen[str]]]:
    """Processes a test started in their own group; killed at the end whatever happens."""
    started: list[subprocess.Popen[str]] = []
    yield started
    for process in started:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        if process.stdout:
            process.stdout.close()


def start_group(started: list[subprocess.Popen[str]], mode: str) -> int:
    """Start PARENT in `mode`; returns its child's PID."""
    process = subprocess.Popen(
        [sys.executable, "-c", PARENT, mode],
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    started.append(process)
    assert process.stdout is not None
    return int(process.stdout.readline())


def test_stop_asks_the_master_to_quit(group: list[subprocess.Popen[str]]) -> None:
    child = start_group(group, "forwards")
    begun = time.monotonic()
    stop(group[0], grace_s=5)
    assert group[0].returncode == 0  # it quit by itself, not killed
    assert time.monotonic() - begun < 4
    assert wait_gone(child)


def test_stop_kills_the_group_after_the_grace_period(group: list[subprocess.Popen[str]]) -> None:
    child = start_group(group, "stubborn")
    begun = time.monotonic()
    stop(group[0], grace_s=0.3)
    assert group[0].returncode == -signal.SIGKILL
    assert 0.3 <= time.monotonic() - begun < 4
    assert wait_gone(child)


def test_stop_of_an_exited_process_is_a_no_op() -> None:
    process = subprocess.Popen([sys.executable, "-c", "pass"], start_new_session=True)
    process.wait()
    stop(process, grace_s=0.1)
    assert process.returncode == 0


def test_stop_also_ends_members_that_outlive_the_leader(
    group: list[subprocess.Popen[str]],
) -> None:
    child = start_group(group, "dies")
    stop(group[0], grace_s=0.5)
    assert group[0].returncode == -signal.SIGTERM
    assert wait_gone(child, timeout_s=1.5)


class FakePopen:
    """How run_load started Locust; Locust 'exits' with code 3 at once."""

    def __init__(self, command: list[str], kwargs: dict[str, Any]) -> None:
        self.command = command
        self.kwargs = kwargs

    def wait(self, timeout: float | None = None) -> int:
        return 3


@pytest.fixture
def fake_popen(monkeypatch: pytest.MonkeyPatch) -> list[FakePopen]:
    started: list[FakePopen] = []

    def popen(command: list[str], **kwargs: Any) -> FakePopen:
        started.append(FakePopen(command, kwargs))
        return started[-1]

    monkeypatch.setattr(runner.subprocess, "Popen", popen)
    return started


def test_run_load_starts_locust_in_its_own_group_and_returns_its_code(
    fake_popen: list[FakePopen], tmp_path: Path
) -> None:
    opts = LoadOptions(users=1, run_time="5s")
    code = runner.run_load(opts, locustfile="/x/lf.py", env={"EXTRA": "1"}, log_dir=tmp_path)
    assert code == 3
    [popen] = fake_popen
    assert popen.command == build_command(opts, "/x/lf.py")
    assert popen.kwargs["start_new_session"] is True
    assert popen.kwargs["env"]["EXTRA"] == "1"
    assert popen.kwargs["stdout"].name == str(tmp_path / "locust.log")
    assert popen.kwargs["stdout"].closed  # closed once Locust is done


def test_run_load_hands_the_aws_keys_to_locust(
    fake_popen: list[FakePopen], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("AWS_ACCESS_KEY_ID", raising=False)
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY", raising=False)
    opts = LoadOptions(aws_access_key_id="AK", aws_secret_access_key="SK")
    runner.run_load(opts)
    command, env = fake_popen[0].command, fake_popen[0].kwargs["env"]
    assert "SK" not in command
    assert (env.get("AWS_ACCESS_KEY_ID"), env.get("AWS_SECRET_ACCESS_KEY")) == ("AK", "SK")
