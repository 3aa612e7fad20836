"""The job's Spark session, started as the configuration asks, and the Kinesis stream it
reads."""

from __future__ import annotations

import signal
from dataclasses import dataclass

from pyspark.sql import DataFrame, SparkSession

from lakehouse_job import driver_class_archive
from lakehouse_job.config import JobConfig
from lakehouse_job.crash_points import CrashPoints
from lakehouse_job.hadoop_conf import YarnDefaults
from lakehouse_job.source_streams import parse_stream_list
from lakehouse_job.stopping import GracefulStop


@dataclass(frozen=True)
class Session:
    """A started session, and what the job attached to it at start."""

    spark: SparkSession
    yarn_defaults: YarnDefaults  # dropped again before every batch
    crash: CrashPoints
    stop: GracefulStop


def start_session(config: JobConfig) -> Session:
    """Spark started, YARN's defaults dropped, the crash points armed, SIGTERM and SIGINT
    asking for a stop between micro-batches."""
    # The JVM that build_session starts inherits SIGTERM as ignored, so a SIGTERM to the
    # whole process group (the supervisor, docker stop) reaches only this driver, which
    # then stops between micro-batches instead of the JVM dying in the middle of one.
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    spark = build_session(config)
    yarn_defaults = YarnDefaults(spark)
    yarn_defaults.drop()
    crash = CrashPoints.from_env()
    crash.attach(spark)
    return Session(spark, yarn_defaults, crash, GracefulStop())


def build_session(config: JobConfig) -> SparkSession:
    driver_class_archive.prepare()
    builder = SparkSession.builder.appName("lakehouse-streaming-job")
    if config.master:
        builder = builder.master(config.master)
    for key, value in config.spark_settings:
        builder = builder.config(key, value)
    if config.catalog == "glue":
        # The job writes and reads its tables by path; Spark's own catalog is not Glue (that
        # needs EMR's client), so it must not start an empty local Hive metastore either.
        return builder.config("spark.sql.catalogImplementation", "in-memory").getOrCreate()
    return builder.enableHiveSupport().getOrCreate()


def kinesis_stream(spark: SparkSession, config: JobConfig) -> DataFrame:
    """One Kinesis source for every stream of --stream (source_streams)."""
    reader = (
        spark.readStream.format("kinesis")
        .option("streamName", ",".join(parse_stream_list(config.stream)))
        .option("region", config.region)
        .option("startingPosition", config.starting_position)
        .option("maxRecordsPerShard", str(config.max_records_per_shard))
    )
    if config.kinesis_endpoint:
        reader = reader.option("endpointUrl", config.kinesis_endpoint)
    for name, value in config.kinesis_options:
        reader = reader.option(name, value)
    return reader.load()
