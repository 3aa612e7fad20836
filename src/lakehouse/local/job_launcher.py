"""Launch the streaming job (spark/lakehouse_job) in local mode.

The job is a PySpark driver with Spark in local mode (`local[2]` by default);
Spark reads services/spark/spark-defaults.conf, the same file compose mounts,
and gets the jars from the cache.
"""

from __future__ import annotations

import fnmatch
import json
import os
import shlex
import sys
from collections.abc import Mapping, Sequence
from datetime import datetime
from pathlib import Path

from lakehouse.core.clients import kinesis_client
from lakehouse.core.config import SERVICES_DIR, Settings
from lakehouse.local import class_archive, installers
from lakehouse.local.supervisor import ServiceSpec, port_is_open
from lakehouse.local.truststore import java_options as truststore_options
from lakehouse.local.truststore import java_truststore
from lakehouse_tables.declarations import Tables, default_tables_path, load_tables

SPARK_UI_PORT = 4040
# Spark's settings for every mode (compose mounts the same file).
SPARK_DEFAULTS = SERVICES_DIR / "spark" / "spark-defaults.conf"


def spark_jars(settings: Settings) -> list[Path]:
    """What Spark needs beyond pyspark's jars: Hudi, s3a, the AWS SDK, the Kinesis source,
    the job's Java helpers (crash points, Hudi metrics reporter), and hudi-aws with the AWS
    SDK v2 where the catalog is Glue."""
    glue = (
        installers.ensure_glue_sync_jars(settings)
        if settings["LAKEHOUSE_CATALOG"] == "glue"
        else []
    )
    return [
        *installers.ensure_spark_jars(settings),
        installers.ensure_kinesis_source_jar(settings),
        installers.ensure_job_helpers_jar(settings),
        *glue,
    ]


def job_env(
    settings: Settings, driver_memory: str = "", *, record_classes: bool = False
) -> dict[str, str]:
    """The environment of a PySpark driver against the local stack: the job's, and the
    notebooks' kernels' (a SparkSession built there gets the same jars and config).
    `record_classes`: the driver is the job (lakehouse_job.job), which finishes recording
    the JVM's class-data archive when there is none yet (lakehouse.local.class_archive)."""
    jars = spark_jars(settings)
    java_home = installers.spark_java_home()
    conf_dir = class_archive.empty_conf_dir(settings)
    class_path = [*jars, conf_dir, *sorted((installers.pyspark_home() / "jars").glob("*.jar"))]
    archive_options, archive_env = class_archive.driver_options(
        settings,
        java_home,
        class_path,
        record=record_classes,
        java_options=" ".join(
            os.environ.get(k, "") for k in ("JAVA_TOOL_OPTIONS", "JDK_JAVA_OPTIONS")
        ),
    )
    submit_args = [
        # On the driver's class path, not --jars: with --jars, Spark copies the ~390 MB of
        # jars into a fresh temp folder at every start, and a killed job leaves it behind.
        *("--driver-class-path", os.pathsep.join(str(j) for j in jars)),
        *("--driver-memory", driver_memory or settings["SPARK_DRIVER_MEMORY"]),
        *("--properties-file", str(SPARK_DEFAULTS)),
    ]
    if archive_options:
        # Before spark.driver.extraJavaOptions (spark-defaults.conf), not instead of it.
        submit_args += ["--conf", f"spark.driver.defaultJavaOptions={' '.join(archive_options)}"]
    env = {**os.environ, **settings.service_env(), **archive_env}
    env.update(
        SPARK_CONF_DIR=str(conf_dir),
        # The driver's RPC, block manager and UI (which has a kill button) on loopback only.
        SPARK_LOCAL_IP="127.0.0.1",
        JAVA_HOME=str(java_home),
        PYSPARK_PYTHON=sys.executable,
        PYSPARK_DRIVER_PYTHON=sys.executable,
        PYSPARK_SUBMIT_ARGS=shlex.join([*submit_args, "pyspark-shell"]),
    )
    java_options = [env.get("JAVA_TOOL_OPTIONS", ""), jit_options(env), trust_options(settings)]
    env["JAVA_TOOL_OPTIONS"] = " ".join(o for o in java_options if o)
    if not env["JAVA_TOOL_OPTIONS"]:
        del env["JAVA_TOOL_OPTIONS"]
    return env


def trust_options(settings: Settings) -> str:
    """The JVM options that make a JVM trust AWS_CA_BUNDLE as well ("" when none is set): the
    driver's (job_env) and the executors' (lakehouse.aws.submit)."""
    if not settings.aws.get("AWS_CA_BUNDLE"):
        return ""
    store = java_truststore(
        Path(settings.aws["AWS_CA_BUNDLE"]), installers.spark_java_home(), settings.run_dir
    )
    return truststore_options(store)


# A driver that lives for a minute (a test's run, a one-off backfill) spends ~40 % of its
# CPU on C2 compilations that never pay off: measured on a 200-record --available-now run,
# 57 -> 33 CPU-s and 36 -> 28 s with C2 off. A long-running job keeps the default, whose
# C2 code is what sustains its throughput. LAKEHOUSE_JOB_JIT=quick (the local test suite
# sets it) stops the JIT at C1, in the driver and in the executors of `lakehouse submit`.
JIT_ENV = "LAKEHOUSE_JOB_JIT"
QUICK_JIT = "-XX:TieredStopAtLevel=1"


def jit_options(env: Mapping[str, str]) -> str:
    """The JVM options of the job's JIT (the driver's and the executors'): see JIT_ENV."""
    return QUICK_JIT if env.get(JIT_ENV) == "quick" else ""


def job_command(
    args: Sequence[str] = (), master: str = "local[2]", module: str = "lakehouse_job.job"
) -> list[str]:
    """The driver's command line; `module`: lakehouse_job.job, or .backfill."""
    return [sys.executable, "-m", module, "--master", master, *args]


class JobStreamsError(RuntimeError):
    """The streams a tables file asks for cannot be found."""


def job_streams(
    settings: Settings, tables: Tables, existing: Sequence[str] | None = None
) -> list[str]:
    """The streams the job reads for `tables`: the stack's stream when an entry is chosen
    by its records' event_type (no `stream:`), and every stream that matches an entry's
    `stream:` pattern (Debezium's one per table), sorted. `existing`: the streams there
    are (default: Kinesis' list)."""
    streams = set()
    if any(spec.stream is None for spec in tables.values()):
        streams.add(settings["KINESIS_STREAM_NAME"])
    patterns = {name: spec.stream for name, spec in tables.items() if spec.stream is not None}
    if patterns:
        if existing is None:
            client = kinesis_client(settings.endpoints)
            existing = [
                name
                for page in client.get_paginator("list_streams").paginate()
                for name in page["StreamNames"]
            ]
        for name, pattern in patterns.items():
            matched = [s for s in existing if fnmatch.fnmatchcase(s, pattern)]
            if not matched:
                raise JobStreamsError(
                    f"no Kinesis stream matches {pattern!r}, the stream of entry {name!r} "
                    "of the tables file: the CDC service makes every captured table's "
                    "stream when it starts (`lakehouse up --cdc`), or create it; or name "
                    "the streams with `-- --stream a,b`"
                )
            streams.update(matched)
    return sorted(streams)


def default_job_args(settings: Settings, tables: Tables | None = None) -> list[str]:
    """The streams `tables` reads and the checkpoint of their current incarnations.

    Local Kinesis engines keep streams in memory: after `down`/`up` a stream is new and
    the old checkpoint's shard ids and sequence numbers mean nothing. The checkpoint is
    named after the oldest stream the job reads, with its creation time: recreated
    streams start a fresh one (at TRIM_HORIZON; the Hudi upserts make re-reading
    harmless), while a stream added to the list (a newly captured table) keeps it, and is
    read from its own trim horizon by the source. `tables`: the job's tables file
    ($LAKEHOUSE_TABLES, else the packaged one, as the job's)."""
    streams = job_streams(settings, tables or load_tables(default_tables_path()))
    client = kinesis_client(settings.endpoints)
    created = {
        stream: client.describe_stream_summary(StreamName=stream)["StreamDescriptionSummary"][
            "StreamCreationTimestamp"
        ]
        for stream in streams
    }
    return [
        "--stream",
        ",".join(streams),
        "--checkpoint",
        f"s3a://{settings['LAKEHOUSE_BUCKET']}/checkpoints/{checkpoint_name(created)}",
        "--status-file",
        str(status_file(settings)),
    ]


def checkpoint_name(created: Mapping[str, datetime]) -> str:
    """The checkpoint of the job that reads these streams (name: creation time): named
    after the oldest of them (default_job_args)."""
    oldest = min(created, key=lambda stream: (created[stream], stream))
    return f"{oldest}-{created[oldest]:%Y%m%dT%H%M%S}"


def status_file(settings: Settings) -> Path:
    """What the running job reports beyond its batches (lakehouse_job.compaction)."""
    return settings.run_dir / "job-status.json"


def job_report(settings: Settings) -> list[str]:
    """Lines for `lakehouse status`: the job's Kinesis lag and each MoR table's compactions,
    failures loud."""
    path = status_file(settings)
    if not path.exists():
        return []
    status = json.loads(path.read_text())
    report = []
    lag = status.get("kinesis_lag")
    if lag:
        report.append(
            f"Kinesis lag: {lag['max_millis_behind_latest'] / 1000:.1f} s behind the newest "
            f"record ({lag['shards_with_lag']} shards behind) after batch {lag['batch_id']}"
        )
        if lag.get("missing_streams"):
            report.append(
                "Kinesis streams that do not exist (the job reads the others, and these "
                f"once they do): {', '.join(lag['missing_streams'])}"
            )
    lines = []
    for table, health in sorted(status.get("compaction", {}).items()):
        line = f"  {table.rsplit('/', 1)[-1]}: {health['runs']} compactions"
        if health["failures"]:
            line += f", {health['failures']} failed"
        if health["consecutive_failures"]:
            line += f", FAILING ({health['consecutive_failures']} in a row): {health['last_error']}"
        lines.append(line)
    if status.get("compaction_failed"):
        lines.append(f"  the job stopped: {status['compaction_failed']}")
    return [*report, *(["Compaction (Merge-on-Read tables):", *lines] if lines else [])]


def job_spec(
    settings: Settings, args: Sequence[str] = (), keepalive_args: Sequence[str] = ()
) -> ServiceSpec:
    """The job as a supervised background service (used by `demo` and `run --background`):
    restarted with backoff when it fails (lakehouse.local.keepalive, given `keepalive_args`),
    resuming from its checkpoint."""
    keepalive = [sys.executable, "-m", "lakehouse.local.keepalive", *keepalive_args, "--"]
    return ServiceSpec(
        name="job",
        command=[*keepalive, *job_command(args)],
        env=job_env(settings, record_classes=True),
        ports=(),
        url=f"http://127.0.0.1:{SPARK_UI_PORT} (Spark UI)",
        health=lambda: port_is_open(SPARK_UI_PORT),
        start_timeout_s=120,
    )
