"""The benchmark's entry to the job: the job's own options and `--writer`, which runs the
yardstick, Hudi's own streaming sink (hudi_streaming_sink), instead of the job's batch
writer. `lakehouse bench` launches it for the profiles that ask for a yardstick:

    python -m lakehouse_job.bench.job --writer hudi-streaming-sink [job options]
"""

from __future__ import annotations

import argparse
import logging
import sys
import time
from collections.abc import Sequence
from functools import partial

from pyspark.sql import SparkSession

from lakehouse_job import driver_class_archive, job, startup
from lakehouse_job.bench import hudi_streaming_sink
from lakehouse_job.cli import build_parser
from lakehouse_job.config import JobConfig
from lakehouse_job.session import kinesis_stream, start_session
from lakehouse_job.stopping import GracefulStop, stop_between_batches

# The job's logger: the yardstick's lines have always been logged under this name.
log = logging.getLogger("lakehouse_job")

JOB_WRITER = "foreach-batch"
YARDSTICKS = ("hudi-streaming-sink", "hudi-streaming-sink-all")


def bench_parser() -> argparse.ArgumentParser:
    """The job's options, and --writer."""
    parser = build_parser()
    parser.add_argument(
        "--writer",
        choices=[JOB_WRITER, *YARDSTICKS],
        default=JOB_WRITER,
        help="benchmark yardsticks: hudi-streaming-sink, Hudi's own sink, one query per Hudi "
        "table; hudi-streaming-sink-all, one per output the job writes (the quarantine table "
        "too, and the raw JSON copy through Spark's file sink)",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    logging.basicConfig(
        level=logging.INFO,
        stream=sys.stdout,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    args = bench_parser().parse_args(argv)
    writer = vars(args).pop("writer")
    config = JobConfig.from_args(args)
    if writer == JOB_WRITER:
        return startup.holding_writer_locks(config, job.run)
    every_output = writer == "hudi-streaming-sink-all"
    return startup.holding_writer_locks(config, partial(run_yardstick, every_output=every_output))


def run_yardstick(config: JobConfig, every_output: bool) -> int:
    """The job's start, then Hudi's streaming sink until the stream is drained or a stop is
    asked; `every_output`: every output the job writes, not the Hudi tables alone."""
    sink = config.sink_settings()
    try:
        specs = startup.declared_tables(config.tables)
        startup.write_options(specs, sink)
    except startup.Refusal as refused:
        return startup.refuse(None, GracefulStop(), str(refused))
    session = start_session(config)
    spark = session.spark
    queries = hudi_streaming_sink.run(
        spark,
        kinesis_stream(spark, config),
        specs,
        sink,
        config.checkpoint,
        config.trigger_seconds,
        config.metrics_file,
        config.available_now,
        every_output=every_output,
    )
    log.info(
        "streaming from %s into %s with Hudi's streaming sink: %d queries (%s)",
        config.stream,
        config.warehouse,
        len(queries),
        ", ".join(q.name for q in queries),
    )
    # Under --available-now each query stops once it has drained the stream; otherwise
    # one query ending (failed) ends the run.
    running = any if config.available_now else all
    while running(q.isActive for q in queries) and not session.stop.requested:
        time.sleep(1)
    for query in queries:
        stop_between_batches(spark, query)
    _deliver_progress(spark)
    errors = [q.exception() for q in queries if q.exception() is not None]
    for error in errors:
        log.error("a streaming query failed: %s", error)
    return 1 if errors else 0


def _deliver_progress(spark: SparkSession, timeout_ms: int = 10_000) -> None:
    """Hand the listeners (ProgressLog: the yardstick's record counts) every progress event
    posted so far: the last ones are still queued when the queries stop, and are lost when
    the driver exits first (the last batches' records then go uncounted)."""
    try:
        spark.sparkContext._jsc.sc().listenerBus().waitUntilEmpty(timeout_ms)
    except Exception as error:  # a late progress line is not worth failing the run for
        log.warning("progress events may be missing from the metrics file: %s", error)


if __name__ == "__main__":
    code = main()
    driver_class_archive.finish_recording()
    sys.exit(code)
