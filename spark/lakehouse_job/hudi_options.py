"""Hudi write options for one declared table and table type. Pure: no Spark needed.

The choices, and why (figures: docs/performance.md, from `lakehouse bench`):
- DefaultHoodieRecordPayload orders by the precombine (event-time) field against
  the stored record too, so a late, older event never overwrites a newer one.
  (The default OverwriteWithLatestAvroPayload only orders within a batch.)
- Deletes are kept as tombstone rows (`_is_deleted = true`) that carry their
  event time: a hard delete leaves nothing to compare with, and an older update
  arriving after it would re-insert the key. Readers filter the tombstones.
- The tables are not partitioned: a key lives in one file group whatever its
  event date, so a key whose date changes cannot leave a copy behind, and no
  global index has to look across partitions. A date-partitioned layout needs
  a global index, which reads every base file (or its footers) and every
  touched file group on each upsert: per-commit cost grew with the table.
  Event dates stay a column (`partition_by.name`) that readers filter on.
- Copy-on-Write uses a Bloom index: files hold key ranges (keys arrive in
  order), so an upsert reads footers and the few files whose range and filter
  match. Files are kept small (1-2 MB) because each upsert rewrites every file
  it touches.
- Merge-on-Read uses a bucket index: a key hashes to one of a fixed number of
  file groups, so an upsert looks nothing up and only appends log blocks.
  Compaction is scheduled by the writer every N delta commits and executed by
  lakehouse_job.compaction on another thread, never inline.
- Table version 6 (what Hudi 0.15 writes) is what Trino 476 reads.
- Profile "baseline" keeps the first release's layout (date partitions,
  GLOBAL_SIMPLE, 100-120 MB files, hive sync every commit) so the benchmark can
  run both on the same events.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final, Literal

from lakehouse_job.hudi_metrics import reporter_options
from lakehouse_job.index_layout import with_layout
from lakehouse_tables import columns
from lakehouse_tables.declarations import TableSpec, TableType

Profile = Literal["fast", "baseline"]
PROFILES: Final[tuple[Profile, ...]] = ("fast", "baseline")
MOR_BUCKETS: Final = 4

PAYLOAD_CLASS = "org.apache.hudi.common.model.DefaultHoodieRecordPayload"

IN_PROCESS_LOCK: Final = "org.apache.hudi.client.transaction.lock.InProcessLockProvider"
ZOOKEEPER_LOCK: Final = "org.apache.hudi.client.transaction.lock.ZookeeperBasedLockProvider"

# Every client of a table, in this JVM or another (the writer, the compaction thread, a
# backfill, a redrive), uses these: optimistic concurrency control under one lock
# (concurrency_options). Failed writes are rolled back lazily, once their writer's
# heartbeat has stopped: under OCC another writer's inflight instant is not a failure.
CONCURRENCY: Final = {
    "hoodie.write.concurrency.mode": "optimistic_concurrency_control",
    # A bucket-indexed delta commit touches every file group, so it can overlap a
    # compaction and lose the conflict check, as can a write beside another writer's;
    # the upsert is then retried (same rows, a new instant) instead of failing the batch.
    "hoodie.write.num.retries.on.conflict.failures": "3",
    "hoodie.write.lock.provider": IN_PROCESS_LOCK,
    "hoodie.cleaner.policy.failed.writes": "LAZY",
}

# The MoR writer and the compaction thread (lakehouse_job.compaction) also agree on the
# metadata table (none).
SHARED_WITH_COMPACTOR: Final = {**CONCURRENCY, "hoodie.metadata.enable": "false"}


# Per-commit fixed costs dominate small streaming batches; these cut them: the metadata
# table doubles every commit's work (Trino 476 lists files itself); every write's rows
# are already unique by key (lakehouse_job.dedupe; the quarantine's keys are Kinesis
# positions); an embedded timeline server is started and stopped for every write.
FEWER_FIXED_COSTS: Final = {
    "hoodie.metadata.enable": "false",
    "hoodie.combine.before.upsert": "false",
    "hoodie.embed.timeline.server": "false",
    "hoodie.write.markers.type": "DIRECT",
    "hoodie.datasource.write.reconcile.schema": "false",
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
    hive_sync: bool = True  # False: no catalog to sync to
    # Where the tables are registered: "hive" (metastore_uri) or "glue" (AWS Glue Data
    # Catalog, in `region`, at `glue_endpoint` when one is set).
    catalog: str = "hive"
    region: str = ""
    glue_endpoint: str = ""
    profile: Profile = "fast"
    # Names this query's checkpoint in the raw copy's folders (sinks.raw_batch_path), since
    # batch ids start again at 0 with every new checkpoint.
    checkpoint: str = ""
    # Hudi's own metrics of each write, reported to the job (lakehouse_job.hudi_metrics).
    hudi_metrics: bool = False
    # The user's Hudi write settings (--hudi-option), over the job's own for every table.
    extra_options: tuple[tuple[str, str], ...] = ()
    # The lock every writer of a table shares (docs/writers.md): ZooKeeper's host:port;
    # "" for a lock within this JVM, where a table has one writing process.
    lock_url: str = ""
    # A writer that dies holding a table's lock blocks the others this long.
    lock_session_ms: int = 10_000


def table_path(sink: SinkSettings, spec: TableSpec, table_type: TableType) -> str:
    return f"{sink.base_path.rstrip('/')}/{spec.table_name(table_type)}"


def quarantine_table_path(sink: SinkSettings) -> str:
    return f"{sink.base_path.rstrip('/')}/quarantine"


def merge_options(spec: TableSpec) -> dict[str, str]:
    """How two versions of a record merge: the later event time wins. The writer and the
    compactor of a table both need them: a Merge-on-Read log can hold a late, older event
    (a bucket index appends without reading the stored row), and compaction without an
    ordering field lets the newest log record win whatever its event time."""
    return {
        "hoodie.datasource.write.precombine.field": spec.precombine,
        "hoodie.datasource.write.payload.class": PAYLOAD_CLASS,
        "hoodie.compaction.payload.class": PAYLOAD_CLASS,
        "hoodie.payload.ordering.field": spec.precombine,
        "hoodie.payload.event.time.field": spec.precombine,
    }


def compaction_options(spec: TableSpec, sink: SinkSettings) -> dict[str, str]:
    """What the compaction thread's client of a Merge-on-Read table (lakehouse_job.
    compaction) must agree on with the table's writer: the merge options and
    SHARED_WITH_COMPACTOR, with the user's --hudi-option values of those keys, which the
    writer takes too (_from_the_sink). Without them a user's lock provider, say, would
    reach the writer and not the compactor: two clients of one table on different locks."""
    table = spec.table_name("MERGE_ON_READ")
    options = {**merge_options(spec), **SHARED_WITH_COMPACTOR, **concurrency_options(sink, table)}
    options.update((key, value) for key, value in sink.extra_options if key in options)
    return options


def lock_folder(sink: SinkSettings) -> str:
    """ZooKeeper folder of one warehouse's table locks: tables of one name in two
    warehouses (a test's, the stack's) do not wait for each other."""
    digest = hashlib.sha256(sink.base_path.rstrip("/").encode()).hexdigest()[:16]
    return f"/lakehouse/locks/{digest}"


def concurrency_options(sink: SinkSettings, table: str) -> dict[str, str]:
    """OCC under the lock every writer of `table` shares: ZooKeeper's when the sink names
    one (a lock whose holder dies is freed at its session's expiry, whatever killed it),
    else one within this JVM."""
    options = dict(CONCURRENCY)
    if sink.lock_url:
        options.update(
            {
                "hoodie.write.lock.provider": ZOOKEEPER_LOCK,
                # host:port: the provider ignores hoodie.write.lock.zookeeper.port.
                "hoodie.write.lock.zookeeper.url": sink.lock_url,
                "hoodie.write.lock.zookeeper.base_path": lock_folder(sink),
                "hoodie.write.lock.zookeeper.lock_key": table,
                "hoodie.write.lock.zookeeper.session_timeout_ms": str(sink.lock_session_ms),
                "hoodie.write.lock.zookeeper.connection_timeout_ms": "15000",
            }
        )
    return options


def is_partitioned(profile: Profile) -> bool:
    return profile == "baseline"


def hudi_options(
    spec: TableSpec, table_type: TableType, sink: SinkSettings, sync: bool = True
) -> dict[str, str]:
    """`sync`: register the table in the metastore after this commit (when there is one)."""
    name = spec.table_name(table_type)
    parallelism = str(sink.shuffle_parallelism)
    options = {
        "hoodie.table.name": name,
        "hoodie.datasource.write.table.type": table_type,
        "hoodie.datasource.write.operation": "upsert",
        "hoodie.datasource.write.recordkey.field": spec.record_key,
        **merge_options(spec),
        "hoodie.upsert.shuffle.parallelism": parallelism,
        "hoodie.insert.shuffle.parallelism": parallelism,
        "hoodie.finalize.write.parallelism": parallelism,
        # Keep enough commits for time travel and incremental reads in the sandbox.
        "hoodie.cleaner.commits.retained": "20",
        "hoodie.keep.min.commits": "30",
        "hoodie.keep.max.commits": "40",
        **FEWER_FIXED_COSTS,
        **concurrency_options(sink, name),
    }
    profile = sink.profile
    if is_partitioned(profile):
        options.update(
            {
                "hoodie.datasource.write.partitionpath.field": spec.partition_name,
                # SimpleKeyGenerator takes one key field. ComplexKeyGenerator only for keys
                # of several: with one field Hudi 0.14.1-1.0.x write it bare and later
                # releases as field:value, so an upgrade duplicates every key (HUDI-9666);
                # several fields are field:value in every release.
                "hoodie.datasource.write.keygenerator.class": (
                    "org.apache.hudi.keygen.SimpleKeyGenerator"
                    if len(spec.record_keys) == 1
                    else "org.apache.hudi.keygen.ComplexKeyGenerator"
                ),
                "hoodie.datasource.write.hive_style_partitioning": "true",
            }
        )
    else:
        options.update(
            {
                "hoodie.datasource.write.partitionpath.field": "",
                # A key of several fields is written in Hudi's complex form (field:value
                # joined by commas) by this generator too, the same in every release.
                "hoodie.datasource.write.keygenerator.class": (
                    "org.apache.hudi.keygen.NonpartitionedKeyGenerator"
                ),
            }
        )
    options.update(_index_and_files(spec, table_type, profile, parallelism))
    if table_type == "MERGE_ON_READ":
        options.update(
            {
                "hoodie.compact.inline": "false",
                "hoodie.compact.schedule.inline": "true",
                "hoodie.compact.inline.max.delta.commits": str(sink.compaction_delta_commits),
                **SHARED_WITH_COMPACTOR,
                **concurrency_options(sink, name),
            }
        )
    partition = spec.partition_name if is_partitioned(profile) else ""
    options.update(_from_the_sink(sink, name, partition, sync))
    return with_layout(options)


def _index_and_files(
    spec: TableSpec, table_type: TableType, profile: Profile, parallelism: str
) -> dict[str, str]:
    """The profile's index and file sizes: baseline's global simple index; otherwise
    snappy, fewer commits cleaned at once, and a bucket index (Merge-on-Read) or a bloom
    index with small-file handling (Copy-on-Write)."""
    if profile == "baseline":
        return {
            "hoodie.index.type": "GLOBAL_SIMPLE",
            "hoodie.simple.index.update.partition.path": "true",
            "hoodie.simple.index.parallelism": parallelism,
            "hoodie.parquet.small.file.limit": str(100 * 1024 * 1024),
            "hoodie.parquet.max.file.size": str(120 * 1024 * 1024),
        }
    options = {"hoodie.parquet.compression.codec": "snappy", "hoodie.clean.max.commits": "10"}
    if table_type == "MERGE_ON_READ":
        options.update(_bucket_index(spec))
    else:
        options.update(_bloom_index_small_files(parallelism))
    return options


def _from_the_sink(sink: SinkSettings, table: str, partition: str, sync: bool) -> dict[str, str]:
    """What every table's write gets from the sink's settings, over the table's own: the
    metastore sync when asked, Hudi's reporter when asked, and last the user's settings
    (--hudi-option), so that they win."""
    options: dict[str, str] = {}
    if sink.hive_sync and sync:
        options.update(hive_sync_options(sink, table, partition))
    if sink.hudi_metrics:
        options.update(reporter_options())
    options.update(sink.extra_options)
    return options


def _bucket_index(spec: TableSpec) -> dict[str, str]:
    return {
        "hoodie.index.type": "BUCKET",
        "hoodie.index.bucket.engine": "SIMPLE",
        "hoodie.bucket.index.num.buckets": str(MOR_BUCKETS),
        "hoodie.bucket.index.hash.field": spec.record_key,
    }


def _bloom_index_small_files(parallelism: str) -> dict[str, str]:
    return {
        "hoodie.index.type": "BLOOM",
        "hoodie.bloom.index.parallelism": parallelism,
        # Hudi sizes files by an estimate until a commit writes more than the
        # small-file limit; ~64 bytes is what an order row takes here.
        "hoodie.copyonwrite.record.size.estimate": "64",
        "hoodie.parquet.small.file.limit": str(1024 * 1024),
        "hoodie.parquet.max.file.size": str(2 * 1024 * 1024),
        # A filter sized for such a file (~30,000 keys; it grows if needed): the
        # default (60,000 keys at 1e-9) is ~300 KB, as large as the data.
        "hoodie.index.bloom.num_entries": "20000",
        "hoodie.index.bloom.fpp": "0.000001",
    }


def hive_sync_options(sink: SinkSettings, table: str, partition: str) -> dict[str, str]:
    """Register the table in the catalog after the commit (MoR: as _ro and _rt): the Hive
    metastore, or Glue through Hudi's AwsGlueCatalogSyncTool (the same table settings)."""
    if sink.catalog == "glue":
        where = {
            "hoodie.datasource.hive_sync.enable": "false",
            "hoodie.datasource.meta.sync.enable": "true",
            "hoodie.meta.sync.client.tool.class": GLUE_SYNC_TOOL,
            "hoodie.aws.glue.region": sink.region,
        }
        if sink.glue_endpoint:
            where["hoodie.aws.glue.endpoint"] = sink.glue_endpoint
    else:
        where = {
            "hoodie.datasource.hive_sync.enable": "true",
            "hoodie.datasource.hive_sync.mode": "hms",
            "hoodie.datasource.hive_sync.metastore.uris": sink.metastore_uri,
        }
    return {
        **where,
        "hoodie.datasource.hive_sync.database": sink.database,
        "hoodie.datasource.hive_sync.table": table,
        "hoodie.datasource.hive_sync.partition_fields": partition,
        "hoodie.datasource.hive_sync.partition_extractor_class": (
            "org.apache.hudi.hive.MultiPartKeysValueExtractor"
            if partition
            else "org.apache.hudi.hive.NonPartitionedExtractor"
        ),
        # Event-time columns stay TIMESTAMP in the metastore, not BIGINT.
        "hoodie.datasource.hive_sync.support_timestamp": "true",
        "hoodie.datasource.hive_sync.auto_create_database": "true",
    }


GLUE_SYNC_TOOL: Final = "org.apache.hudi.aws.sync.AwsGlueCatalogSyncTool"
CATALOGS: Final = ("hive", "glue")


# A rejected record is identified by its Kinesis position.
QUARANTINE_KEY: Final = (columns.Q_SHARD_ID, columns.Q_SEQUENCE_NUMBER)


def quarantine_options(sink: SinkSettings, sync: bool = True) -> dict[str, str]:
    """The quarantine table: one row per rejected record, keyed by its Kinesis position,
    so a replayed batch rewrites the same rows instead of adding copies."""
    parallelism = str(sink.shuffle_parallelism)
    options = {
        "hoodie.table.name": "quarantine",
        "hoodie.datasource.write.table.type": "COPY_ON_WRITE",
        "hoodie.datasource.write.operation": "upsert",
        "hoodie.datasource.write.recordkey.field": ",".join(QUARANTINE_KEY),
        "hoodie.datasource.write.precombine.field": columns.Q_QUARANTINED_AT,
        "hoodie.datasource.write.partitionpath.field": columns.Q_DATE,
        "hoodie.datasource.write.keygenerator.class": "org.apache.hudi.keygen.ComplexKeyGenerator",
        "hoodie.datasource.write.hive_style_partitioning": "true",
        "hoodie.index.type": "SIMPLE",
        "hoodie.upsert.shuffle.parallelism": parallelism,
        "hoodie.insert.shuffle.parallelism": parallelism,
        "hoodie.metadata.enable": "false",
    }
    if sink.profile != "baseline":
        # Measured on a quarantine of 2,400 rows taking 40 a commit, interleaved with the
        # baseline's options: 1.32 s instead of 1.66, 1.67 CPU-s instead of 2.13 (medians).
        options.update(FEWER_FIXED_COSTS)
        options["hoodie.clean.max.commits"] = "10"
    # The stream job and a redrive both write the quarantine.
    options.update(concurrency_options(sink, "quarantine"))
    options.update(_from_the_sink(sink, "quarantine", columns.Q_DATE, sync))
    return with_layout(options)


@dataclass(frozen=True)
class WrittenTable:
    """A Hudi table a run writes, with the options its writes use."""

    name: str
    path: str
    record_key: str
    options: dict[str, str]
    spec: TableSpec | None  # None: the quarantine, the job's own table


def written_tables(specs: Mapping[str, TableSpec], sink: SinkSettings) -> list[WrittenTable]:
    """Every Hudi table a run writes: each declared table type, and the quarantine."""
    tables = [
        WrittenTable(
            spec.table_name(t),
            table_path(sink, spec, t),
            spec.record_key,
            hudi_options(spec, t, sink),
            spec,
        )
        for spec in specs.values()
        for t in spec.table_types
    ]
    quarantine = WrittenTable(
        "quarantine",
        quarantine_table_path(sink),
        ",".join(QUARANTINE_KEY),
        quarantine_options(sink),
        None,
    )
    return [*tables, quarantine]
