"""Hudi write options for one declared table and table type. Pure: no Spark needed.

The choices, and why:
- DefaultHoodieRecordPayload orders by the precombine (event-time) field against
  the stored record too, so a late, older event never overwrites a newer one.
  (The default OverwriteWithLatestAvroPayload only orders within a batch.)
- Deletes are kept as tombstone rows (`_is_deleted = true`) that carry their
  event time: a hard delete leaves nothing to compare with, and an older update
  arriving after it would re-insert the key. Readers filter the tombstones.
- A global index moves a record whose partition (event date) changes, instead
  of leaving the old copy behind in its old partition.
- Merge-on-Read: compaction is scheduled by the writer every N delta commits
  and executed by lakehouse_job.compaction on another thread, never inline.
- Table version 6 (what Hudi 0.15 writes) is what Trino 476 reads.
"""

from __future__ import annotations

from dataclasses import dataclass

from lakehouse_job.tables import TableSpec, TableType

IS_DELETED = "_is_deleted"
PAYLOAD_CLASS = "org.apache.hudi.common.model.DefaultHoodieRecordPayload"

# The MoR writer and the compaction thread (lakehouse_job.compaction) are two
# clients of one table in one JVM: both must use these.
SHARED_WITH_COMPACTOR = {
    "hoodie.write.concurrency.mode": "optimistic_concurrency_control",
    "hoodie.write.lock.provider": "org.apache.hudi.client.transaction.lock.InProcessLockProvider",
    "hoodie.cleaner.policy.failed.writes": "LAZY",
    "hoodie.metadata.enable": "false",
}


@dataclass(frozen=True)
class SinkSettings:
    """What the job is told about where and how to write."""

    base_path: str  # Hudi tables, e.g. s3a://lakehouse/warehouse/lakehouse.db
    raw_base_path: str  # the raw JSON copy, e.g. s3a://lakehouse/raw
    database: str
    metastore_uri: str
    compaction_delta_commits: int = 5
    shuffle_parallelism: int = 2
    hive_sync: bool = True


def table_path(sink: SinkSettings, spec: TableSpec, table_type: TableType) -> str:
    return f"{sink.base_path.rstrip('/')}/{spec.table_name(table_type)}"


def hudi_options(spec: TableSpec, table_type: TableType, sink: SinkSettings) -> dict[str, str]:
    name = spec.table_name(table_type)
    parallelism = str(sink.shuffle_parallelism)
    options = {
        "hoodie.table.name": name,
        "hoodie.datasource.write.table.type": table_type,
        "hoodie.datasource.write.operation": "upsert",
        "hoodie.datasource.write.recordkey.field": spec.record_key,
        "hoodie.datasource.write.precombine.field": spec.precombine,
        "hoodie.datasource.write.partitionpath.field": spec.partition_name,
        "hoodie.datasource.write.keygenerator.class": "org.apache.hudi.keygen.SimpleKeyGenerator",
        "hoodie.datasource.write.hive_style_partitioning": "true",
        "hoodie.datasource.write.payload.class": PAYLOAD_CLASS,
        "hoodie.payload.ordering.field": spec.precombine,
        "hoodie.payload.event.time.field": spec.precombine,
        "hoodie.index.type": "GLOBAL_SIMPLE",
        "hoodie.simple.index.update.partition.path": "true",
        "hoodie.upsert.shuffle.parallelism": parallelism,
        "hoodie.insert.shuffle.parallelism": parallelism,
        "hoodie.simple.index.parallelism": parallelism,
        "hoodie.finalize.write.parallelism": parallelism,
        # Small-file handling: new inserts top up files under 100 MB; files stop at 120 MB.
        "hoodie.parquet.small.file.limit": str(100 * 1024 * 1024),
        "hoodie.parquet.max.file.size": str(120 * 1024 * 1024),
        # Keep enough commits for time travel and incremental reads in the sandbox.
        "hoodie.cleaner.commits.retained": "20",
        "hoodie.keep.min.commits": "30",
        "hoodie.keep.max.commits": "40",
        # Per-commit fixed costs dominate small streaming batches; these cut them:
        # the metadata table doubles every commit's work (Trino 476 lists files itself);
        # the batch is already deduplicated (lakehouse_job.dedupe); an embedded timeline
        # server is started and stopped for every write.
        "hoodie.metadata.enable": "false",
        "hoodie.combine.before.upsert": "false",
        "hoodie.embed.timeline.server": "false",
        "hoodie.write.markers.type": "DIRECT",
        "hoodie.datasource.write.reconcile.schema": "false",
    }
    if table_type == "MERGE_ON_READ":
        options.update(
            {
                "hoodie.compact.inline": "false",
                "hoodie.compact.schedule.inline": "true",
                "hoodie.compact.inline.max.delta.commits": str(sink.compaction_delta_commits),
                **SHARED_WITH_COMPACTOR,
            }
        )
    if sink.hive_sync:
        options.update(hive_sync_options(sink, name, spec.partition_name))
    return options


def hive_sync_options(sink: SinkSettings, table: str, partition: str) -> dict[str, str]:
    """Register the table in the metastore after each commit (MoR: as _ro and _rt)."""
    return {
        "hoodie.datasource.hive_sync.enable": "true",
        "hoodie.datasource.hive_sync.mode": "hms",
        "hoodie.datasource.hive_sync.metastore.uris": sink.metastore_uri,
        "hoodie.datasource.hive_sync.database": sink.database,
        "hoodie.datasource.hive_sync.table": table,
        "hoodie.datasource.hive_sync.partition_fields": partition,
        "hoodie.datasource.hive_sync.partition_extractor_class": (
            "org.apache.hudi.hive.MultiPartKeysValueExtractor"
        ),
        # Event-time columns stay TIMESTAMP in the metastore, not BIGINT.
        "hoodie.datasource.hive_sync.support_timestamp": "true",
        "hoodie.datasource.hive_sync.auto_create_database": "true",
    }


def quarantine_options(sink: SinkSettings) -> dict[str, str]:
    """The quarantine table: one row per rejected record, keyed by its Kinesis position,
    so a replayed batch rewrites the same rows instead of adding copies."""
    parallelism = str(sink.shuffle_parallelism)
    options = {
        "hoodie.table.name": "quarantine",
        "hoodie.datasource.write.table.type": "COPY_ON_WRITE",
        "hoodie.datasource.write.operation": "upsert",
        "hoodie.datasource.write.recordkey.field": "shard_id,sequence_number",
        "hoodie.datasource.write.precombine.field": "quarantined_at",
        "hoodie.datasource.write.partitionpath.field": "quarantine_date",
        "hoodie.datasource.write.keygenerator.class": "org.apache.hudi.keygen.ComplexKeyGenerator",
        "hoodie.datasource.write.hive_style_partitioning": "true",
        "hoodie.index.type": "SIMPLE",
        "hoodie.upsert.shuffle.parallelism": parallelism,
        "hoodie.insert.shuffle.parallelism": parallelism,
        "hoodie.metadata.enable": "false",
    }
    if sink.hive_sync:
        options.update(hive_sync_options(sink, "quarantine", "quarantine_date"))
    return options
