"""lakehouse.job_launcher: the job's status as `lakehouse status` reports it; its environment."""

import json
from pathlib import Path

import pytest

from lakehouse import job_launcher
from lakehouse.config import load_settings

pytestmark = pytest.mark.unit


def test_compaction_failures_are_reported_loudly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LAKEHOUSE_STATE", str(tmp_path))
    settings = load_settings()
    assert job_launcher.job_report(settings) == []  # no job has run
    path = job_launcher.status_file(settings)
    path.parent.mkdir(parents=True)
    healthy = {"runs": 4, "failures": 0, "consecutive_failures": 0, "last_error": None}
    failing = {"runs": 1, "failures": 3, "consecutive_failures": 2, "last_error": "boom"}
    lag = {"batch_id": 7, "max_millis_behind_latest": 2500, "shards_with_lag": 1}
    compaction = {"s3a://b/w/a_mor": healthy, "s3a://b/w/b_mor": failing}
    path.write_text(json.dumps({"kinesis_lag": lag, "compaction": compaction}))
    assert job_launcher.job_report(settings) == [
        "Kinesis lag: 2.5 s behind the newest record (1 shards behind) after batch 7",
        "Compaction (Merge-on-Read tables):",
        "  a_mor: 4 compactions",
        "  b_mor: 1 compactions, 3 failed, FAILING (2 in a row): boom",
    ]


def test_quick_jit_is_asked_for_and_keeps_other_java_tool_options(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    settings = load_settings()
    monkeypatch.setattr(job_launcher, "spark_jars", lambda _settings: [])
    monkeypatch.setattr(job_launcher.installers, "spark_java_home", lambda: Path("/jdk"))
    monkeypatch.delenv(job_launcher.JIT_ENV, raising=False)
    monkeypatch.setenv("JAVA_TOOL_OPTIONS", "-Dx=1")
    assert job_launcher.job_env(settings)["JAVA_TOOL_OPTIONS"] == "-Dx=1"
    monkeypatch.setenv(job_launcher.JIT_ENV, "quick")
    assert job_launcher.job_env(settings)["JAVA_TOOL_OPTIONS"] == "-Dx=1 -XX:TieredStopAtLevel=1"
