"""lakehouse.local.job_launcher: the job's status as `lakehouse status` reports it; its environment;
the streams it reads."""

import json
import shlex
from datetime import UTC, datetime
from pathlib import Path

import pytest

from lakehouse.cdc import CDC_TABLES_YAML
from lakehouse.core.config import Settings, load_settings
from lakehouse.local import class_archive, job_launcher
from lakehouse_tables.declarations import default_tables_path, load_tables

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
    lag = {
        "batch_id": 7,
        "max_millis_behind_latest": 2500,
        "shards_with_lag": 1,
        "missing_streams": ["cdc.public.items"],
    }
    compaction = {"s3a://b/w/a_mor": healthy, "s3a://b/w/b_mor": failing}
    path.write_text(json.dumps({"kinesis_lag": lag, "compaction": compaction}))
    assert job_launcher.job_report(settings) == [
        "Kinesis lag: 2.5 s behind the newest record (1 shards behind) after batch 7",
        "Kinesis streams that do not exist (the job reads the others, and these once they "
        "do): cdc.public.items",
        "Compaction (Merge-on-Read tables):",
        "  a_mor: 4 compactions",
        "  b_mor: 1 compactions, 3 failed, FAILING (2 in a row): boom",
    ]


@pytest.fixture
def jarless_settings(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Settings:
    """Settings with a state folder of the test's own, and no jars to fetch for job_env."""
    monkeypatch.setenv("LAKEHOUSE_STATE", str(tmp_path))
    monkeypatch.setattr(job_launcher, "spark_jars", lambda _settings: [])
    return load_settings()


def test_quick_jit_is_asked_for_and_keeps_other_java_tool_options(
    monkeypatch: pytest.MonkeyPatch, jarless_settings: Settings
) -> None:
    settings = jarless_settings
    monkeypatch.setattr(job_launcher.installers, "spark_java_home", lambda: Path("/jdk"))
    monkeypatch.delenv(job_launcher.JIT_ENV, raising=False)
    monkeypatch.setenv("JAVA_TOOL_OPTIONS", "-Dx=1")
    assert job_launcher.job_env(settings)["JAVA_TOOL_OPTIONS"] == "-Dx=1"
    monkeypatch.setenv(job_launcher.JIT_ENV, "quick")
    assert job_launcher.job_env(settings)["JAVA_TOOL_OPTIONS"] == "-Dx=1 -XX:TieredStopAtLevel=1"


def test_the_job_reads_the_stacks_stream_for_event_type_entries() -> None:
    settings = load_settings()
    tables = load_tables(default_tables_path())
    assert job_launcher.job_streams(settings, tables, existing=[]) == [
        settings["KINESIS_STREAM_NAME"]
    ]


def test_stream_patterns_take_every_matching_stream_sorted() -> None:
    existing = ["cdc.public.orders", "events", "cdc.public.customers", "cdc.other.orders"]
    streams = job_launcher.job_streams(load_settings(), load_tables(CDC_TABLES_YAML), existing)
    assert streams == ["cdc.public.customers", "cdc.public.orders"]


def test_a_pattern_with_no_stream_names_the_entry_and_what_to_do() -> None:
    tables = load_tables(CDC_TABLES_YAML)
    with pytest.raises(job_launcher.JobStreamsError, match=r"cdc_orders.*lakehouse up --cdc"):
        job_launcher.job_streams(load_settings(), tables, existing=["x.public.customers"])


def test_the_checkpoint_is_named_after_the_oldest_stream_so_an_added_one_keeps_it() -> None:
    first = datetime(2026, 11, 20, 8, 0, 1, tzinfo=UTC)
    later = datetime(2026, 11, 24, 9, 30, 0, tzinfo=UTC)
    one = {"cdc.public.orders": first}
    assert job_launcher.checkpoint_name(one) == "cdc.public.orders-20261120T080001"
    grown = {**one, "cdc.public.accounts": later}  # a table captured later
    assert job_launcher.checkpoint_name(grown) == job_launcher.checkpoint_name(one)
    recreated = {"cdc.public.orders": later, "cdc.public.accounts": later}  # down, up
    assert job_launcher.checkpoint_name(recreated) == "cdc.public.accounts-20261124T093000"


def test_the_driver_reads_spark_defaults_with_an_empty_conf_dir(
    jarless_settings: Settings,
) -> None:
    settings = jarless_settings
    env = job_launcher.job_env(settings, record_classes=True)
    args = shlex.split(env["PYSPARK_SUBMIT_ARGS"])
    assert args[args.index("--properties-file") + 1] == str(job_launcher.SPARK_DEFAULTS)
    assert args[-1] == "pyspark-shell"
    assert not any(Path(env["SPARK_CONF_DIR"]).iterdir())  # the JDK archives no folder
    assert Path(env[class_archive.ARCHIVE_ENV]).parent == class_archive.archive_dir(settings)
    assert class_archive.ARCHIVE_ENV not in job_launcher.job_env(settings)  # notebooks, shells
