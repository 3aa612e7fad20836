"""lakehouse.local.job_control: the local job started, stopped and restarted alone, against a
fake supervisor (no processes)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from lakehouse.core.config import Settings, load_settings
from lakehouse.local import job_control, job_launcher
from lakehouse_tables.declarations import TABLES_YAML

pytestmark = pytest.mark.unit


class FakeSupervisor:
    def __init__(self) -> None:
        self.running = False
        self.events: list[tuple[str, Any]] = []

    def is_running(self, name: str) -> bool:
        return self.running

    def start(self, spec: Any, progress: Any = print) -> None:
        self.events.append(("start", spec.command))
        self.running = True

    def stop(self, name: str, timeout_s: float = 20.0) -> bool:
        self.events.append(("stop", timeout_s))
        was, self.running = self.running, False
        return was

    def log_file(self, name: str) -> Path:
        return Path(f"/logs/{name}.log")


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> tuple[Settings, FakeSupervisor]:
    monkeypatch.setenv("LAKEHOUSE_STATE", str(tmp_path))
    monkeypatch.delenv("LAKEHOUSE_TABLES", raising=False)
    supervisor = FakeSupervisor()
    monkeypatch.setattr(job_control, "supervisor_for", lambda _settings: supervisor)
    monkeypatch.setattr(
        job_launcher,
        "default_job_args",
        lambda settings, tables: ["--stream", "events", "--checkpoint", "s3a://b/c"],
    )
    monkeypatch.setattr(
        job_launcher,
        "job_spec",
        lambda settings, args: type("Spec", (), {"command": ["job", *args]})(),
    )
    return load_settings(), supervisor


def test_options_are_found_and_removed_as_argparse_reads_them() -> None:
    args = ["--tables", "a.yaml", "--x", "1", "--tables=b.yaml"]
    assert job_control.option_value(args, "--tables") == "b.yaml"
    assert job_control.without_option(args, "--tables") == ["--x", "1"]


def test_start_names_the_tables_file_and_records_the_options(
    fake: tuple[Settings, FakeSupervisor], tmp_path: Path
) -> None:
    settings, supervisor = fake
    said: list[str] = []
    assert job_control.start(settings, ["--trigger-seconds", "2"], said.append)
    (event, command) = supervisor.events[-1]
    assert event == "start"
    assert command == [
        "job",
        "--stream",
        "events",
        "--checkpoint",
        "s3a://b/c",
        "--tables",
        str(TABLES_YAML.resolve()),
        "--trigger-seconds",
        "2",
    ]
    recorded = json.loads(job_control.args_file(settings).read_text())
    assert recorded["args"] == ["--tables", str(TABLES_YAML.resolve()), "--trigger-seconds", "2"]
    assert said[-1].startswith(f"The job is running with {TABLES_YAML.resolve()}")
    assert not job_control.start(settings, [], said.append)  # already running
    assert "already running" in said[-1]


def test_stop_says_when_there_was_nothing_to_stop(fake: tuple[Settings, FakeSupervisor]) -> None:
    settings, supervisor = fake
    said: list[str] = []
    assert not job_control.stop(settings, said.append)
    assert said == ["The job is not running."]
    supervisor.running = True
    assert job_control.stop(settings, said.append, timeout_s=5)
    assert supervisor.events[-1] == ("stop", 5)


def test_restart_keeps_the_options_and_reads_the_tables_file_again(
    fake: tuple[Settings, FakeSupervisor], tmp_path: Path
) -> None:
    settings, supervisor = fake
    job_control.start(settings, ["--trigger-seconds", "2"], lambda _: None)
    other = tmp_path / "mine.yaml"
    other.write_text(TABLES_YAML.read_text())
    job_control.restart(settings, lambda _: None, tables=str(other))
    kinds = [event for event, _ in supervisor.events]
    assert kinds == ["start", "stop", "start"]
    command = supervisor.events[-1][1]
    assert command[-4:] == ["--tables", str(other.resolve()), "--trigger-seconds", "2"]
    job_control.restart(settings, lambda _: None)  # the same file, the same options
    assert supervisor.events[-1][1] == command


def test_restart_options_replace_the_recorded_ones() -> None:
    recorded = ["--tables", "/a.yaml", "--trigger-seconds", "2"]
    assert job_control.restart_args(recorded, None, []) == recorded
    assert job_control.restart_args(recorded, "/b.yaml", []) == [
        "--tables",
        "/b.yaml",
        "--trigger-seconds",
        "2",
    ]
    assert job_control.restart_args(recorded, None, ["--x"]) == ["--x"]


def test_a_broken_tables_file_stops_nothing(
    fake: tuple[Settings, FakeSupervisor], tmp_path: Path
) -> None:
    from lakehouse_tables.declarations import TablesConfigError

    settings, supervisor = fake
    job_control.start(settings, [], lambda _: None)
    broken = tmp_path / "broken.yaml"
    broken.write_text("event_types: {a: {table: 1}}\n")
    with pytest.raises(TablesConfigError):
        job_control.restart(settings, lambda _: None, tables=str(broken))
    assert [event for event, _ in supervisor.events] == ["start"]
