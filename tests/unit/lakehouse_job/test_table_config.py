"""The settings Hudi fixed at a table's creation against a run's options (table_config,
table_config_guard's choice of what it reports)."""

from dataclasses import replace

import pytest

from lakehouse_job.hudi_options import SinkSettings, written_tables
from lakehouse_job.table_config import Conflict, conflicts, refusal
from lakehouse_job.table_config_guard import _declared
from lakehouse_tables.declarations import load_tables
from lakehouse_tables.schema_change import parse_properties

pytestmark = pytest.mark.unit

SINK = SinkSettings(
    base_path="s3a://b/warehouse", raw_base_path="s3a://b/raw", database="db", metastore_uri=""
)
ORDERS = {"orders": load_tables()["orders"]}
# What Hudi 0.15 stored for the job's tables (read from the sandbox's MinIO).
COMMON = """\
hoodie.table.cdc.enabled=false
hoodie.archivelog.folder=archived
hoodie.timeline.layout.version=1
hoodie.datasource.write.drop.partition.columns=false
hoodie.table.timeline.timezone=LOCAL
hoodie.partition.metafile.use.base.format=false
hoodie.populate.meta.fields=true
hoodie.table.base.file.format=PARQUET
hoodie.database.name=
hoodie.datasource.write.partitionpath.urlencode=false
hoodie.table.version=6
"""
STORED = {
    "hudi_orders_cow": COMMON
    + """hoodie.table.type=COPY_ON_WRITE
hoodie.table.precombine.field=order_ts
hoodie.table.partition.fields=
hoodie.table.recordkey.fields=order_id
hoodie.table.name=hudi_orders_cow
hoodie.datasource.write.hive_style_partitioning=false
hoodie.table.keygenerator.class=org.apache.hudi.keygen.NonpartitionedKeyGenerator
""",
    "hudi_orders_mor": COMMON
    + """hoodie.compaction.payload.class=org.apache.hudi.common.model.DefaultHoodieRecordPayload
hoodie.table.type=MERGE_ON_READ
hoodie.table.precombine.field=order_ts
hoodie.table.partition.fields=
hoodie.table.name=hudi_orders_mor
hoodie.table.recordkey.fields=order_id
hoodie.datasource.write.hive_style_partitioning=false
hoodie.table.keygenerator.class=org.apache.hudi.keygen.NonpartitionedKeyGenerator
""",
    "quarantine": COMMON
    + """hoodie.table.type=COPY_ON_WRITE
hoodie.table.precombine.field=quarantined_at
hoodie.table.partition.fields=quarantine_date
hoodie.table.recordkey.fields=shard_id,sequence_number
hoodie.table.name=quarantine
hoodie.datasource.write.hive_style_partitioning=true
hoodie.table.keygenerator.class=org.apache.hudi.keygen.ComplexKeyGenerator
""",
}


def found(sink: SinkSettings) -> dict[str, list[Conflict]]:
    """Table name -> the conflicts the guard reports for it."""
    return {
        table.name: [
            c
            for c in conflicts(table.options, parse_properties(STORED[table.name]))
            if not _declared(table, c)
        ]
        for table in written_tables(ORDERS, sink)
    }


def test_the_job_as_shipped_writes_the_tables_it_created() -> None:
    assert found(SINK) == {"hudi_orders_cow": [], "hudi_orders_mor": [], "quarantine": []}


def test_the_baseline_profile_on_the_fast_profiles_tables_is_refused() -> None:
    """Hudi fails the first write ("Config conflict ... PartitionPath"): the job was
    restarted into the same failure."""
    refused = found(replace(SINK, profile="baseline"))
    for name in ("hudi_orders_cow", "hudi_orders_mor"):
        assert {c.option: (c.asked, c.stored) for c in refused[name]} == {
            "hoodie.datasource.write.partitionpath.field": ("partition_date", ""),
            "hoodie.datasource.write.keygenerator.class": (
                "org.apache.hudi.keygen.SimpleKeyGenerator",
                "org.apache.hudi.keygen.NonpartitionedKeyGenerator",
            ),
            "hoodie.datasource.write.hive_style_partitioning": ("true", "false"),
        }
    assert refused["quarantine"] == []


def test_a_hudi_option_naming_another_key_is_refused_a_declared_one_left_to_schema_change() -> None:
    other_key = replace(
        SINK, extra_options=(("hoodie.datasource.write.recordkey.field", "customer_id"),)
    )
    refused = found(other_key)
    assert [c.option for c in refused["hudi_orders_cow"]] == [
        "hoodie.datasource.write.recordkey.field"
    ]
    assert "stored as hoodie.table.recordkey.fields" in str(refused["hudi_orders_cow"][0])
    # The quarantine's key is the job's own: another is refused there too.
    assert [c.option for c in refused["quarantine"]] == ["hoodie.datasource.write.recordkey.field"]
    # The tables file declaring another key: schema_evolution refuses it, with its reasons.
    declared = {"orders": replace(ORDERS["orders"], record_key="customer_id")}
    for table in written_tables(declared, SINK)[:2]:
        stored = parse_properties(STORED[table.name])
        listed = conflicts(table.options, stored)
        assert [c.option for c in listed] == ["hoodie.datasource.write.recordkey.field"]
        assert all(_declared(table, c) for c in listed)


def test_hudis_comparisons() -> None:
    stored = {
        "hoodie.datasource.write.hive_style_partitioning": "true",
        "hoodie.table.partition.fields": "region,day",
        "hoodie.table.recordkey.fields": "id",
    }
    # Options stored under their own name compare ignoring case; the key does not.
    assert conflicts({"hoodie.datasource.write.hive_style_partitioning": "TRUE"}, stored) == []
    assert conflicts({"hoodie.datasource.write.recordkey.field": "ID"}, stored) != []
    # A CustomKeyGenerator's "field:TYPE" stores the field.
    partitions = {"hoodie.datasource.write.partitionpath.field": "region:SIMPLE, day:TIMESTAMP"}
    assert conflicts(partitions, stored) == []
    # An option the table does not store is not Hudi's to refuse.
    assert conflicts({"hoodie.parquet.max.file.size": "1"}, stored) == []


def test_escaped_values_are_read_as_written() -> None:
    assert parse_properties("hoodie.base.path=s3a\\://b/w\nk=a\\=b\\\\c") == {
        "hoodie.base.path": "s3a://b/w",
        "k": "a=b\\c",
    }


def test_the_refusal_names_the_table_each_setting_and_what_to_do() -> None:
    conflict = Conflict(
        "hoodie.datasource.write.partitionpath.field",
        "order_date",
        "",
        "hoodie.table.partition.fields",
    )
    message = refusal("hudi_orders_cow", [conflict])
    assert message is not None
    assert message.startswith("hudi_orders_cow: hoodie.datasource.write.partitionpath.field: ")
    assert "'order_date', created with ''" in message
    assert "--hudi-option or --profile" in message and "another --warehouse" in message
    assert refusal("hudi_orders_cow", []) is None
