"""The job's decisions without Spark: when a commit also updates the metastore
(metastore_sync), the trigger watchdog (stopping), a tables file refused at start, the
command line read into a JobConfig (cli, config)."""

import dataclasses
import signal
import threading
from pathlib import Path
from types import SimpleNamespace

import pytest

from lakehouse_job.bench.job import bench_parser
from lakehouse_job.cli import build_parser
from lakehouse_job.config import JobConfig
from lakehouse_job.job import run
from lakehouse_job.metastore_sync import MetastoreSync
from lakehouse_job.startup import EXIT_REFUSED_CONFIG
from lakehouse_job.status import LagListener, StatusFile
from lakehouse_job.stopping import TriggerWatchdog, detach_listeners
from lakehouse_tables.declarations import TABLES_YAML

pytestmark = pytest.mark.unit


def test_each_table_syncs_on_its_first_commit_of_a_run() -> None:
    sync = MetastoreSync()
    assert sync.needed("orders_cow")
    sync.done("orders_cow")
    assert not sync.needed("orders_cow")
    assert sync.needed("orders_mor")


def test_a_failed_write_is_synced_again() -> None:
    sync = MetastoreSync()
    assert sync.needed("orders_cow")
    # the write failed: done() was never called
    assert sync.needed("orders_cow")


def test_a_new_partition_brings_a_sync() -> None:
    sync = MetastoreSync()
    sync.done("quarantine", ["2026-11-22"])
    assert not sync.needed("quarantine", ["2026-11-22"])
    assert sync.needed("quarantine", ["2026-11-22", "2026-11-23"])


def test_baseline_syncs_every_commit() -> None:
    sync = MetastoreSync(every_commit=True)
    sync.done("orders_cow")
    assert sync.needed("orders_cow")


def test_the_watchdog_fires_only_when_one_trigger_runs_too_long() -> None:
    now = [0.0]
    watchdog = TriggerWatchdog(10.0, clock=lambda: now[0])
    assert watchdog.overdue(True) is None  # a trigger starts at 0
    now[0] = 9.0
    assert watchdog.overdue(True) is None
    now[0] = 9.5
    assert watchdog.overdue(False) is None  # it ended; the next one starts afresh
    now[0] = 10.0
    assert watchdog.overdue(True) is None
    now[0] = 20.5
    assert watchdog.overdue(True) == 10.5


def test_an_invalid_tables_file_is_refused_not_restarted(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    tables = tmp_path / "tables.yaml"
    tables.write_text(TABLES_YAML.read_text().replace("amount: double", "amount: money", 1))
    config = JobConfig.from_args(build_parser().parse_args(["--tables", str(tables)]))
    handlers = signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)
    try:
        assert run(config) == EXIT_REFUSED_CONFIG  # the supervisor does not restart exit 5
    finally:
        signal.signal(signal.SIGTERM, handlers[0])
        signal.signal(signal.SIGINT, handlers[1])
    assert "the tables file is not valid" in caplog.text
    assert "schema field 'amount' has type 'money'" in caplog.text


def test_kinesis_source_options_pass_through_as_name_value_pairs() -> None:
    args = build_parser().parse_args(
        ["--kinesis-option", "readAhead=false", "--kinesis-option", " maxFetchDurationMs = 5000"]
    )
    assert args.kinesis_option == [("readAhead", "false"), ("maxFetchDurationMs", "5000")]
    with pytest.raises(SystemExit):
        build_parser().parse_args(["--kinesis-option", "readAhead"])


def test_spark_settings_pass_through_as_key_value_pairs() -> None:
    args = build_parser().parse_args(
        ["--spark-conf", "spark.sql.shuffle.partitions=4", "--spark-conf", "a.b = c=d"]
    )
    assert args.spark_conf == [("spark.sql.shuffle.partitions", "4"), ("a.b", "c=d")]
    assert build_parser().parse_args([]).spark_conf == []
    with pytest.raises(SystemExit):
        build_parser().parse_args(["--spark-conf", "spark.sql.shuffle.partitions"])


def test_hudi_settings_pass_through_as_key_value_pairs() -> None:
    args = build_parser().parse_args(["--hudi-option", "hoodie.clean.max.commits=3"])
    assert args.hudi_option == [("hoodie.clean.max.commits", "3")]
    assert build_parser().parse_args([]).hudi_option == []


def test_listeners_are_removed_once_the_querys_end_reached_them() -> None:
    removed: list[str] = []
    spark = SimpleNamespace(streams=SimpleNamespace(removeListener=removed.append))
    ended = threading.Event()
    lag = LagListener(StatusFile(None))
    lag.onQueryTerminated(None)  # the event the job waits for
    assert lag.terminated.is_set()
    detach_listeners(spark, ["progress", "lag"], lag.terminated)  # type: ignore[arg-type,list-item]
    assert removed == ["progress", "lag"]
    detach_listeners(spark, ["late"], ended, timeout_s=0.01)  # type: ignore[arg-type,list-item]
    assert removed[-1] == "late"  # removed all the same, after the wait


def test_the_config_holds_every_option_frozen() -> None:
    args = build_parser().parse_args(
        ["--kinesis-option", "readAhead=false", "--hudi-option", "a=b", "--catalog", "glue"]
    )
    config = JobConfig.from_args(args)
    assert config.kinesis_options == (("readAhead", "false"),)
    assert config.spark_settings == ()
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.stream = "other"  # type: ignore[misc]
    sink = config.sink_settings()
    assert sink.extra_options == (("a", "b"),)
    assert sink.hive_sync  # Glue registers the tables without a metastore URI
    assert not JobConfig.from_args(build_parser().parse_args([])).sink_settings().hive_sync


def test_every_option_has_a_config_field_and_every_field_an_option() -> None:
    parser = build_parser()
    options = {a.dest for a in parser._actions if a.dest != "help"}
    named = {field.name for field in dataclasses.fields(JobConfig)}
    renamed = {"kinesis_option", "spark_conf", "hudi_option"}
    assert named == (options - renamed) | {"kinesis_options", "spark_settings", "hudi_options"}


def test_only_the_benchmarks_entry_takes_a_writer() -> None:
    with pytest.raises(SystemExit):
        build_parser().parse_args(["--writer", "hudi-streaming-sink"])
    args = bench_parser().parse_args(["--writer", "hudi-streaming-sink-all", "--available-now"])
    assert (args.writer, args.available_now) == ("hudi-streaming-sink-all", True)
    assert bench_parser().parse_args([]).writer == "foreach-batch"
