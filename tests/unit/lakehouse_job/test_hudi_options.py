"""The Hudi options that carry the pipeline's guarantees (see hudi_options' docstring)."""

from dataclasses import replace

import pytest

from lakehouse_job.hudi_options import (
    FEWER_FIXED_COSTS,
    SHARED_WITH_COMPACTOR,
    SinkSettings,
    compaction_options,
    hudi_options,
    merge_options,
    quarantine_options,
    table_path,
)
from lakehouse_tables.declarations import load_tables

pytestmark = pytest.mark.unit

SINK = SinkSettings(
    base_path="s3a://b/warehouse/db.db/",
    raw_base_path="s3a://b/raw",
    database="db",
    metastore_uri="thrift://h:9083",
    compaction_delta_commits=7,
)
ORDERS = load_tables()["orders"]


def test_event_time_ordering_survives_across_commits() -> None:
    options = hudi_options(ORDERS, "COPY_ON_WRITE", SINK)
    assert options["hoodie.datasource.write.payload.class"].endswith("DefaultHoodieRecordPayload")
    assert options["hoodie.payload.ordering.field"] == "order_ts"
    assert options["hoodie.datasource.write.precombine.field"] == "order_ts"
    assert options["hoodie.datasource.write.recordkey.field"] == "order_id"


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_one_file_group_per_key_whatever_its_event_date(table_type: str) -> None:
    # Unpartitioned: a key whose event date changes stays in its file group, found by a
    # non-global index, instead of a global index that reads across partitions.
    options = hudi_options(ORDERS, table_type, SINK)  # type: ignore[arg-type]
    assert options["hoodie.datasource.write.partitionpath.field"] == ""
    assert options["hoodie.datasource.write.keygenerator.class"].endswith(
        "NonpartitionedKeyGenerator"
    )
    assert options["hoodie.datasource.hive_sync.partition_extractor_class"].endswith(
        "NonPartitionedExtractor"
    )
    expected_index = "BLOOM" if table_type == "COPY_ON_WRITE" else "BUCKET"
    assert options["hoodie.index.type"] == expected_index


def test_baseline_profile_keeps_the_first_release_layout() -> None:
    options = hudi_options(ORDERS, "COPY_ON_WRITE", replace(SINK, profile="baseline"))
    assert options["hoodie.index.type"] == "GLOBAL_SIMPLE"
    assert options["hoodie.simple.index.update.partition.path"] == "true"
    assert options["hoodie.datasource.write.partitionpath.field"] == "partition_date"


def test_compaction_merges_by_event_time_too() -> None:
    merge = merge_options(ORDERS)
    assert merge["hoodie.payload.ordering.field"] == "order_ts"
    assert merge["hoodie.compaction.payload.class"].endswith("DefaultHoodieRecordPayload")
    assert merge.items() <= hudi_options(ORDERS, "MERGE_ON_READ", SINK).items()


def test_the_compactor_agrees_with_the_writer_on_merging_and_locking() -> None:
    lock = "hoodie.write.lock.provider"
    user = replace(
        SINK,
        extra_options=(
            (lock, "org.example.SharedLock"),
            ("hoodie.payload.ordering.field", "seq"),
            ("hoodie.clean.max.commits", "3"),  # the writer's alone
        ),
    )
    for sink in (SINK, user):
        writer = hudi_options(ORDERS, "MERGE_ON_READ", sink)
        compactor = compaction_options(ORDERS, sink)
        assert compactor.items() <= writer.items()
        assert set(compactor) == set(merge_options(ORDERS)) | set(SHARED_WITH_COMPACTOR)
    assert compaction_options(ORDERS, user)[lock] == "org.example.SharedLock"
    assert compaction_options(ORDERS, user)["hoodie.payload.ordering.field"] == "seq"


def test_metastore_sync_only_when_asked() -> None:
    assert "hoodie.datasource.hive_sync.enable" in hudi_options(ORDERS, "COPY_ON_WRITE", SINK)
    unsynced = hudi_options(ORDERS, "COPY_ON_WRITE", SINK, sync=False)
    assert not any(k.startswith("hoodie.datasource.hive_sync") for k in unsynced)


def test_merge_on_read_only_schedules_compaction_inline() -> None:
    options = hudi_options(ORDERS, "MERGE_ON_READ", SINK)
    assert options["hoodie.compact.inline"] == "false"
    assert options["hoodie.compact.schedule.inline"] == "true"
    assert options["hoodie.compact.inline.max.delta.commits"] == "7"
    assert "InProcessLockProvider" in options["hoodie.write.lock.provider"]
    assert "hoodie.compact.schedule.inline" not in hudi_options(ORDERS, "COPY_ON_WRITE", SINK)


def test_tables_are_named_by_type_synced_and_placed_under_the_warehouse() -> None:
    mor = hudi_options(ORDERS, "MERGE_ON_READ", SINK)
    assert mor["hoodie.table.name"] == "hudi_orders_mor"
    assert mor["hoodie.datasource.hive_sync.mode"] == "hms"
    assert mor["hoodie.datasource.hive_sync.metastore.uris"] == "thrift://h:9083"
    assert mor["hoodie.datasource.hive_sync.support_timestamp"] == "true"
    assert table_path(SINK, ORDERS, "COPY_ON_WRITE") == "s3a://b/warehouse/db.db/hudi_orders_cow"


def test_no_hive_sync_without_a_metastore() -> None:
    sink = SinkSettings("s3a://b/w", "s3a://b/r", "db", "", hive_sync=False)
    assert not any(
        k.startswith("hoodie.datasource.hive_sync")
        for k in hudi_options(ORDERS, "COPY_ON_WRITE", sink)
    )


def test_quarantine_is_keyed_by_kinesis_position() -> None:
    options = quarantine_options(SINK)
    assert options["hoodie.datasource.write.recordkey.field"] == "shard_id,sequence_number"
    assert options["hoodie.table.name"] == "quarantine"


def test_the_quarantine_skips_the_per_commit_work_the_tables_skip_except_in_the_baseline() -> None:
    fast = quarantine_options(SINK)
    assert FEWER_FIXED_COSTS.items() <= fast.items()
    assert FEWER_FIXED_COSTS.items() <= hudi_options(ORDERS, "COPY_ON_WRITE", SINK).items()
    baseline = quarantine_options(replace(SINK, profile="baseline"))
    assert baseline["hoodie.metadata.enable"] == "false"
    assert "hoodie.embed.timeline.server" not in baseline


def test_glue_catalog_syncs_through_hudis_glue_tool_with_the_same_table_settings() -> None:
    glue = replace(SINK, catalog="glue", region="eu-west-2", glue_endpoint="https://g.test")
    options = hudi_options(ORDERS, "MERGE_ON_READ", glue)
    assert options["hoodie.datasource.hive_sync.enable"] == "false"  # no Hive metastore
    assert options["hoodie.datasource.meta.sync.enable"] == "true"
    assert options["hoodie.meta.sync.client.tool.class"].endswith("AwsGlueCatalogSyncTool")
    assert options["hoodie.aws.glue.region"] == "eu-west-2"
    assert options["hoodie.aws.glue.endpoint"] == "https://g.test"
    assert options["hoodie.datasource.hive_sync.database"] == "db"
    assert "hoodie.datasource.hive_sync.metastore.uris" not in options
    without_endpoint = hudi_options(ORDERS, "COPY_ON_WRITE", replace(glue, glue_endpoint=""))
    assert "hoodie.aws.glue.endpoint" not in without_endpoint
    assert quarantine_options(glue)["hoodie.meta.sync.client.tool.class"].endswith("SyncTool")


def test_hudi_reports_each_write_to_the_job_when_asked() -> None:
    reporter = "hoodie.metrics.reporter.class"
    assert reporter not in hudi_options(ORDERS, "COPY_ON_WRITE", SINK)
    sink = replace(SINK, hudi_metrics=True)
    for options in (
        hudi_options(ORDERS, "COPY_ON_WRITE", sink),
        hudi_options(ORDERS, "MERGE_ON_READ", sink),
        quarantine_options(sink),
    ):
        assert options["hoodie.metrics.on"] == "true"
        assert options[reporter] == "lakehouse.hudi.CommitMetricsReporter"


def test_the_users_hudi_settings_override_the_jobs_for_every_table() -> None:
    level = "hoodie.write.tagged.record.storage.level"
    sink = replace(
        SINK, extra_options=((level, "MEMORY_AND_DISK"), ("hoodie.clean.max.commits", "3"))
    )
    for options in (
        hudi_options(ORDERS, "COPY_ON_WRITE", sink),
        hudi_options(ORDERS, "MERGE_ON_READ", sink),
        quarantine_options(sink),
    ):
        assert options[level] == "MEMORY_AND_DISK"
        assert options["hoodie.clean.max.commits"] == "3"
    assert level not in hudi_options(ORDERS, "COPY_ON_WRITE", SINK)


def test_a_key_of_several_fields_and_its_key_generator() -> None:
    lines = replace(ORDERS, record_key="order_id,customer_id")
    options = hudi_options(lines, "MERGE_ON_READ", SINK)
    assert options["hoodie.datasource.write.recordkey.field"] == "order_id,customer_id"
    assert options["hoodie.datasource.write.keygenerator.class"].endswith(
        "NonpartitionedKeyGenerator"
    )
    baseline = replace(SINK, profile="baseline")
    assert hudi_options(lines, "COPY_ON_WRITE", baseline)[
        "hoodie.datasource.write.keygenerator.class"
    ].endswith(".ComplexKeyGenerator")
    # One field keeps the simple generator: ComplexKeyGenerator's encoding of a single
    # field changed between releases (HUDI-9666).
    assert hudi_options(ORDERS, "COPY_ON_WRITE", baseline)[
        "hoodie.datasource.write.keygenerator.class"
    ].endswith(".SimpleKeyGenerator")


ZK_SINK = replace(SINK, lock_url="127.0.0.1:2181", lock_session_ms=10_000)


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_every_table_takes_the_lock_every_writer_shares(table_type: str) -> None:
    options = hudi_options(ORDERS, table_type, ZK_SINK)  # type: ignore[arg-type]
    quarantine = quarantine_options(ZK_SINK)
    for written, table in ((options, ORDERS.table_name(table_type)), (quarantine, "quarantine")):  # type: ignore[arg-type]
        assert written["hoodie.write.concurrency.mode"] == "optimistic_concurrency_control"
        assert written["hoodie.cleaner.policy.failed.writes"] == "LAZY"
        assert written["hoodie.write.lock.provider"].endswith("ZookeeperBasedLockProvider")
        # host:port in the url: the provider does not read the port key.
        assert written["hoodie.write.lock.zookeeper.url"] == "127.0.0.1:2181"
        assert written["hoodie.write.lock.zookeeper.lock_key"] == table
        assert written["hoodie.write.lock.zookeeper.session_timeout_ms"] == "10000"


def test_the_compactor_takes_the_writers_lock() -> None:
    writer = hudi_options(ORDERS, "MERGE_ON_READ", ZK_SINK)
    compactor = compaction_options(ORDERS, ZK_SINK)
    for key, value in compactor.items():
        if key.startswith("hoodie.write.lock") or key == "hoodie.write.concurrency.mode":
            assert writer[key] == value, key


def test_two_warehouses_lock_apart_and_without_a_lock_url_the_lock_is_this_jvms() -> None:
    other = replace(ZK_SINK, base_path="s3a://b/e2e/1/warehouse")
    first = hudi_options(ORDERS, "COPY_ON_WRITE", ZK_SINK)["hoodie.write.lock.zookeeper.base_path"]
    second = hudi_options(ORDERS, "COPY_ON_WRITE", other)["hoodie.write.lock.zookeeper.base_path"]
    assert first != second and first.startswith("/lakehouse/locks/")
    alone = hudi_options(ORDERS, "COPY_ON_WRITE", SINK)
    assert alone["hoodie.write.lock.provider"].endswith("InProcessLockProvider")
    assert not any(k.startswith("hoodie.write.lock.zookeeper") for k in alone)
