"""The streaming job's configuration: the command line read once into a frozen, typed
JobConfig, which start-up, the query and the writers are given instead of the parser's
Namespace."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import Any

from lakehouse_job.hudi_options import Profile, SinkSettings

# Options whose config field has a plural name (each option is repeatable).
_FIELD_OF_OPTION = {
    "kinesis_option": "kinesis_options",
    "spark_conf": "spark_settings",
    "hudi_option": "hudi_options",
}

NameValues = tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class JobConfig:
    """One run's settings, as the command line (cli.build_parser) gave them."""

    # The source
    stream: str
    kinesis_endpoint: str | None
    region: str
    starting_position: str
    max_records_per_shard: int
    kinesis_options: NameValues
    # Spark and Hudi
    master: str | None
    spark_settings: NameValues
    hudi_options: NameValues
    profile: Profile
    # The tables and where they are written and registered
    tables: str
    database: str
    metastore_uri: str | None
    catalog: str
    glue_endpoint: str | None
    trino_url: str | None
    warehouse: str
    raw: str
    checkpoint: str
    writer_lease: bool
    lock_url: str | None
    lock_session_ms: int
    # The query
    trigger_seconds: float
    available_now: bool
    batch_timeout: float
    parallel_writes: int
    # Compaction of Merge-on-Read tables
    compaction_delta_commits: int
    compaction_interval: float
    max_compaction_failures: int
    final_compaction: bool
    # What the job reports
    status_file: str | None
    metrics_port: int
    metrics_host: str
    metrics_file: str | None
    hudi_metrics: bool

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> JobConfig:
        """Every option of `args` (an option without a field is a TypeError), repeated ones
        as tuples."""
        given: dict[str, Any] = {
            _FIELD_OF_OPTION.get(name, name): tuple(value) if isinstance(value, list) else value
            for name, value in vars(args).items()
        }
        return cls(**given)

    def sink_settings(self) -> SinkSettings:
        """Where and how the batch writer writes."""
        return SinkSettings(
            base_path=self.warehouse,
            raw_base_path=self.raw,
            database=self.database,
            metastore_uri=self.metastore_uri or "",
            compaction_delta_commits=self.compaction_delta_commits,
            hive_sync=self.catalog == "glue" or bool(self.metastore_uri),
            profile=self.profile,
            checkpoint=self.checkpoint,
            catalog=self.catalog,
            region=self.region,
            glue_endpoint=self.glue_endpoint or "",
            hudi_metrics=self.hudi_metrics,
            extra_options=self.hudi_options,
            lock_url=self.lock_url or "",
            lock_session_ms=self.lock_session_ms,
        )
