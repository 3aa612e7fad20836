"""The job's command line: its options, with defaults from the environment the launchers
set. The streaming job reads it into a JobConfig (config); the backfill adds its own."""

from __future__ import annotations

import argparse
import os

from lakehouse_job.hudi_options import CATALOGS, PROFILES
from lakehouse_job.source_streams import StreamListError, parse_stream_list
from lakehouse_tables.declarations import default_tables_path

# Above the options in --help.
DESCRIPTION = (
    "The streaming job: Kinesis -> parse/validate/dedupe -> Hudi CoW + MoR, raw JSON, "
    "quarantine.\n"
    "\n"
    "Run it with `lakehouse run` (local mode) or spark-submit (compose). Settings come\n"
    "from the command line, falling back to the environment the launchers set\n"
    "(KINESIS_ENDPOINT, HMS_URI, LAKEHOUSE_BUCKET, ...).\n"
)


def _env(name: str, default: str | None = None) -> str | None:
    return os.environ.get(name, default)


def _stream_list_arg(value: str) -> str:
    try:
        parse_stream_list(value)
    except StreamListError as error:
        raise argparse.ArgumentTypeError(str(error)) from None
    return value


def _name_value_arg(value: str) -> tuple[str, str]:
    name, sep, option = value.partition("=")
    if not sep or not name.strip():
        raise argparse.ArgumentTypeError(f"expected NAME=VALUE, got {value!r}")
    return name.strip(), option.strip()


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="lakehouse-job", description=DESCRIPTION)
    _source_options(p)
    _setting_options(p)
    _table_options(p)
    _run_options(p)
    _driver_options(p)
    return p


def _source_options(p: argparse.ArgumentParser) -> None:
    """The Kinesis source."""
    p.add_argument(
        "--stream",
        type=_stream_list_arg,
        default=_env("KINESIS_STREAM_NAME", "events"),
        help="the Kinesis stream, or several separated by commas (a stream added later is "
        "read from its trim horizon; one left out keeps its position in the checkpoint)",
    )
    p.add_argument(
        "--kinesis-endpoint",
        default=_env("KINESIS_ENDPOINT"),
        help="Kinesis API URL; omit for real AWS",
    )
    p.add_argument("--region", default=_env("AWS_REGION", "us-east-1"))
    p.add_argument(
        "--starting-position",
        choices=["TRIM_HORIZON", "LATEST"],
        default="TRIM_HORIZON",
        help="where to start when there is no checkpoint",
    )
    p.add_argument(
        "--max-records-per-shard",
        type=int,
        default=20000,
        help="upper bound of records read per shard per micro-batch",
    )
    p.add_argument(
        "--kinesis-option",
        action="append",
        default=[],
        type=_name_value_arg,
        metavar="NAME=VALUE",
        help="an option of the Kinesis source (spark/kinesis-source/README.md), e.g. "
        "readAhead=false; repeatable",
    )


def _setting_options(p: argparse.ArgumentParser) -> None:
    """Spark's and Hudi's own settings."""
    p.add_argument(
        "--spark-conf",
        action="append",
        default=[],
        type=_name_value_arg,
        metavar="KEY=VALUE",
        help="a Spark setting for this run, over spark-defaults.conf (e.g. "
        "spark.sql.shuffle.partitions=4; spark.driver.extraJavaOptions replaces the "
        "defaults' JVM options in local mode); repeatable",
    )
    p.add_argument(
        "--hudi-option",
        action="append",
        default=[],
        type=_name_value_arg,
        metavar="KEY=VALUE",
        help="a Hudi write setting for every table of this run, over the job's own (e.g. "
        "hoodie.parquet.compression.codec=zstd), and for the compaction of Merge-on-Read "
        "tables where it is one the two must share (merging, locking); repeatable",
    )


def _table_options(p: argparse.ArgumentParser) -> None:
    """The tables, where they are registered, and where the job writes."""
    bucket = _env("LAKEHOUSE_BUCKET", "lakehouse")
    database = _env("LAKEHOUSE_DATABASE", "lakehouse")
    p.add_argument(
        "--tables",
        default=str(default_tables_path()),
        help="table declarations (default: $LAKEHOUSE_TABLES, else the packaged tables.yaml)",
    )
    p.add_argument("--database", default=database)
    p.add_argument("--metastore-uri", default=_env("HMS_URI"))
    p.add_argument(
        "--catalog",
        choices=CATALOGS,
        default=_env("LAKEHOUSE_CATALOG", "hive") or "hive",
        help="where the tables are registered: hive (--metastore-uri; none: not registered) "
        "or glue (AWS Glue Data Catalog of --region)",
    )
    p.add_argument(
        "--glue-endpoint",
        default=_env("GLUE_ENDPOINT"),
        help="Glue API URL; omit for AWS's own",
    )
    p.add_argument(
        "--trino-url",
        default=_env("TRINO_URL"),
        help="Trino, where the job creates the live views and raw JSON tables (empty: none)",
    )
    p.add_argument(
        "--lock-url",
        default=_env("LOCK_URL"),
        help="ZooKeeper (host:port) holding the lock every writer of a table shares, so that "
        "a backfill can run beside the job (docs/writers.md); empty: a lock within this "
        "process, and a backfill refuses while the job runs",
    )
    p.add_argument(
        "--lock-session-ms",
        type=int,
        default=int(_env("ZOOKEEPER_SESSION_TIMEOUT_MS") or 10_000),
        help="how long a writer that dies holding a table's lock blocks the others",
    )
    p.add_argument("--warehouse", default=f"s3a://{bucket}/warehouse/{database}.db")
    p.add_argument("--raw", default=f"s3a://{bucket}/raw")
    p.add_argument("--checkpoint", default=f"s3a://{bucket}/checkpoints/lakehouse-job")


def _run_options(p: argparse.ArgumentParser) -> None:
    """How the query runs, compacts and stops."""
    p.add_argument("--trigger-seconds", type=float, default=5.0)
    p.add_argument(
        "--available-now",
        action="store_true",
        help="process what the stream holds now, then stop (tests, demo)",
    )
    p.add_argument("--compaction-delta-commits", type=int, default=5)
    p.add_argument("--compaction-interval", type=float, default=20.0)
    p.add_argument(
        "--batch-timeout",
        type=float,
        default=600.0,
        help="seconds one trigger may run before the job gives up on a hung dependency "
        "and exits 4 (the supervisor restarts it; the batch is replayed)",
    )
    p.add_argument(
        "--max-compaction-failures",
        type=int,
        default=10,
        help="consecutive failed compactions of one table that stop the job (exit 1)",
    )
    p.add_argument(
        "--status-file",
        default=_env("LAKEHOUSE_JOB_STATUS_FILE"),
        help="JSON the job keeps current: Kinesis lag, compactions (lakehouse status)",
    )
    p.add_argument(
        "--writer-lease",
        action=argparse.BooleanOptionalAction,
        default=(_env("LAKEHOUSE_JOB_WRITER_LEASE") or "").lower() in ("1", "true", "yes"),
        help="also hold a lease on S3 beside the checkpoint and the warehouse, so that jobs "
        "on other hosts are refused too (lakehouse_job.writer_lease; the aws target's "
        "default; LAKEHOUSE_JOB_WRITER_LEASE)",
    )
    p.add_argument(
        "--final-compaction",
        action="store_true",
        help="after the query stops, compact every MoR table fully",
    )
    p.add_argument(
        "--parallel-writes",
        type=int,
        default=1,
        help="sink writes of one micro-batch run side by side (default 1: one after another, "
        "the Copy-on-Write tables first; side by side they contend for the driver and the "
        "cores, which costs CPU and leaves the tables less fresh: docs/performance.md)",
    )
    p.add_argument(
        "--profile",
        choices=PROFILES,
        default="fast",
        help="table layout and write settings; 'baseline' is the first release's (benchmarks)",
    )


def _driver_options(p: argparse.ArgumentParser) -> None:
    """Where the driver runs, and what it reports."""
    p.add_argument("--master", default=_env("SPARK_MASTER"))
    p.add_argument(
        "--metrics-port",
        type=int,
        default=int(_env("LAKEHOUSE_JOB_METRICS_PORT", "0") or 0),
        help="serve the job's own metrics for Prometheus on this port (0: not served)",
    )
    p.add_argument(
        "--metrics-host",
        default=_env("LAKEHOUSE_JOB_METRICS_HOST", "127.0.0.1"),
        help="address the metrics are served on (compose: 0.0.0.0)",
    )
    p.add_argument(
        "--metrics-file",
        default=_env("LAKEHOUSE_METRICS_FILE"),
        help="append one JSON line per micro-batch (the benchmark reads it)",
    )
    p.add_argument(
        "--no-hudi-metrics",
        dest="hudi_metrics",
        action="store_false",
        help="leave Hudi's own metrics of each write off (in the metrics line and series)",
    )
