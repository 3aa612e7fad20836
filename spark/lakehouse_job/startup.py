"""The start-up checks: each refuses a run that must not write, before it writes anything,
and names the exit code it ends the job with.

Exit 3: another job holds the checkpoint or the warehouse (a restart may find it gone).
Exit 5: a configuration the job cannot apply (the tables file, the options, what the
checkpoint and the stored tables already hold): a restart cannot fix it, so the
supervisor (lakehouse.keepalive) does not restart on it.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Mapping, Sequence

from pyspark.sql import SparkSession

from lakehouse_job.checkpoint_sinks import (
    CheckpointSinks,
    CheckpointSinksRefused,
    check_checkpoint_sinks,
)
from lakehouse_job.config import JobConfig
from lakehouse_job.hudi_options import SinkSettings, WrittenTable, written_tables
from lakehouse_job.index_guard import check_index_layouts
from lakehouse_job.index_layout import IndexLayoutRefused
from lakehouse_job.schema_evolution import plan_tables
from lakehouse_job.stopping import GracefulStop
from lakehouse_job.table_config import TableConfigRefused
from lakehouse_job.table_config_guard import check_table_configs
from lakehouse_job.writer_lease import WriterLease, lease_location, s3_client_from_env
from lakehouse_job.writer_lock import WriterLock, WriterLockError
from lakehouse_tables.declarations import TablesConfigError, TableSpec, load_tables
from lakehouse_tables.schema_change import SchemaChangeRefused, TablePlan

# The job's logger: refusals have always been logged under this name.
log = logging.getLogger("lakehouse_job")

EXIT_WRITER_LOCKED = 3
EXIT_REFUSED_CONFIG = 5
HOLD_ON_REFUSAL_ENV = "LAKEHOUSE_HOLD_ON_REFUSAL"


class Refusal(Exception):
    """A configuration the job cannot apply (exit 5); its text is the log's error."""


def declared_tables(path: str) -> Mapping[str, TableSpec]:
    """The tables file; exit 5 when it is not valid."""
    try:
        return load_tables(path)
    except TablesConfigError as invalid:
        raise Refusal(f"the tables file is not valid: {invalid}") from None


def write_options(specs: Mapping[str, TableSpec], sink: SinkSettings) -> list[WrittenTable]:
    """Every table's write options, built before Spark starts; exit 5 when they cannot be
    (a --hudi-option that asks for another index layout)."""
    try:
        return written_tables(specs, sink)
    except IndexLayoutRefused as refused:
        raise Refusal(str(refused)) from None


def check_checkpoint(spark: SparkSession, config: JobConfig) -> CheckpointSinks:
    """The sinks this run writes, held against those the checkpoint's batches went to;
    exit 5 when they differ (the checkpoint's positions would skip records for them)."""
    asked = CheckpointSinks(config.warehouse, config.raw)
    try:
        check_checkpoint_sinks(spark, config.checkpoint, asked)
    except CheckpointSinksRefused as refused:
        raise Refusal(str(refused)) from None
    return asked


def plan_stored_tables(
    spark: SparkSession,
    specs: Mapping[str, TableSpec],
    sink: SinkSettings,
    tables_file: str,
    tables: Sequence[WrittenTable],
) -> dict[str, TablePlan]:
    """The declared tables held against the stored ones: their schemas (the plan of each
    table's changes), index layouts and the settings Hudi fixed at creation. Exit 5 when
    any cannot take the change, with every refusal at once, so that a user sees them all."""
    refusals: list[str] = []
    plans: dict[str, TablePlan] = {}
    try:
        plans = plan_tables(spark, specs, sink, tables_file)
    except SchemaChangeRefused as refused:
        refusals.append(str(refused))
    try:
        check_index_layouts(spark, tables)
    except IndexLayoutRefused as refused:
        refusals.append(str(refused))
    try:
        check_table_configs(spark, tables)
    except TableConfigRefused as refused:
        refusals.append(str(refused))
    if refusals:
        raise Refusal("\n".join(refusals))
    return plans


def holding_writer_locks(config: JobConfig, run: Callable[[JobConfig], int]) -> int:
    """`run(config)` while holding this host's flock on the checkpoint and on the warehouse
    and, with --writer-lease, a lease on S3 beside each; exit 3 when another job holds one:
    a second job on this checkpoint, or on these tables (with another checkpoint), must not
    write at all."""
    # This host's flock first: a lease of this host is then a dead predecessor's.
    locks: list[WriterLock | WriterLease] = []
    try:
        for resource in (config.checkpoint, config.warehouse):
            locks.append(WriterLock(resource).acquire())
        if config.writer_lease:
            client = s3_client_from_env()
            for resource in (config.checkpoint, config.warehouse):
                if lease_location(resource) is None:
                    log.info("no writer lease for %s: not on S3 (the flock guards it)", resource)
                    continue
                locks.append(WriterLease(client, resource).acquire())
        return run(config)
    except WriterLockError as error:
        log.error("%s", error)
        return EXIT_WRITER_LOCKED
    finally:
        for lock in reversed(locks):
            lock.release()


def refuse(spark: SparkSession | None, stop: GracefulStop, error: str) -> int:
    """A configuration the job cannot apply: logged, nothing written, exit 5."""
    log.error("%s", error)
    if os.environ.get(HOLD_ON_REFUSAL_ENV) == "1":
        # Compose restarts any failed container, and a restart cannot fix a tables file or
        # a stream list: hold, with the error in the log, until the container is stopped.
        if spark is not None:
            spark.stop()
        log.error("holding until stopped: fix the configuration, then restart the job")
        while not stop.requested:
            time.sleep(1)
    return EXIT_REFUSED_CONFIG
