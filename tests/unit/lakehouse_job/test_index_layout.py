"""An existing table's index layout against the one a run asks for (index_layout)."""

import json
from dataclasses import replace

import pytest

from lakehouse_job.hudi_options import (
    MOR_BUCKETS,
    SinkSettings,
    hudi_options,
    quarantine_options,
)
from lakehouse_job.index_layout import (
    LAYOUT_KEY,
    IndexLayout,
    IndexLayoutRefused,
    asked_layout,
    file_id,
    inferred_layout,
    recorded_layout,
    refusal,
)
from lakehouse_tables.declarations import load_tables

pytestmark = pytest.mark.unit

SINK = SinkSettings(
    base_path="s3a://b/warehouse", raw_base_path="s3a://b/raw", database="db", metastore_uri=""
)
ORDERS = load_tables()["orders"]
FOUR = IndexLayout("BUCKET", "SIMPLE", 4, "order_id")


def test_every_write_records_the_layout_its_options_ask_for() -> None:
    mor = hudi_options(ORDERS, "MERGE_ON_READ", SINK)
    assert IndexLayout.parse(mor[LAYOUT_KEY]) == IndexLayout(
        "BUCKET", "SIMPLE", MOR_BUCKETS, "order_id"
    )
    assert IndexLayout.parse(hudi_options(ORDERS, "COPY_ON_WRITE", SINK)[LAYOUT_KEY]) == (
        IndexLayout("BLOOM")
    )
    assert IndexLayout.parse(quarantine_options(SINK)[LAYOUT_KEY]) == IndexLayout("SIMPLE")
    # The user's options are the ones recorded.
    eight = replace(SINK, extra_options=(("hoodie.bucket.index.num.buckets", "8"),))
    recorded = IndexLayout.parse(hudi_options(ORDERS, "MERGE_ON_READ", eight)[LAYOUT_KEY])
    assert recorded == replace(FOUR, buckets=8)


def test_unset_options_take_hudis_defaults() -> None:
    assert asked_layout({}) == IndexLayout("SIMPLE")
    bucket = {"hoodie.index.type": "bucket", "hoodie.datasource.write.recordkey.field": "k"}
    assert asked_layout(bucket) == IndexLayout("BUCKET", "SIMPLE", 256, "k")


def test_a_commits_recorded_layout_is_read_back() -> None:
    commit = {"extraMetadata": {"schema": "{}", LAYOUT_KEY: str(FOUR)}}
    assert recorded_layout(json.dumps(commit)) == FOUR
    assert recorded_layout(json.dumps({"extraMetadata": {"schema": "{}"}})) is None
    assert recorded_layout("not json") is None


def test_file_group_ids_of_base_and_log_files() -> None:
    base = "00000003-6033-447b-8e2d-8b750db57cef-0_2-177-271_20261128190104480.parquet"
    log = ".00000003-6033-447b-8e2d-8b750db57cef-0_20261128190026133.log.1_3-63-67"
    assert file_id(base) == file_id(log) == "00000003-6033-447b-8e2d-8b750db57cef-0"
    assert file_id(".hoodie_partition_metadata") is None
    assert file_id("hoodie.properties") is None


def test_a_table_older_than_the_record_is_read_from_its_file_names() -> None:
    bucket_ids = [f"0000000{n}-6033-447b-8e2d-8b750db57cef-0" for n in range(4)]
    assert inferred_layout(bucket_ids, "order_id", 4) == FOUR
    # More buckets than the default show in the names.
    assert inferred_layout([*bucket_ids, "00000007-aa"], "order_id", 4) == replace(FOUR, buckets=8)
    # One file group a look-up index created: not a bucket layout.
    bloom = "3f2a9c1e-1b8f-4d6e-9c6a-0123456789ab-0"
    assert inferred_layout([*bucket_ids, bloom], "order_id", 4) == IndexLayout("other")
    assert inferred_layout([], "order_id", 4) is None


@pytest.mark.parametrize(
    ("stored", "asked", "refused"),
    [
        (FOUR, FOUR, False),
        (FOUR, replace(FOUR, buckets=8), True),  # keys would hash elsewhere: duplicates
        (FOUR, replace(FOUR, buckets=2), True),
        (FOUR, replace(FOUR, hash_field="customer_id"), True),
        (FOUR, replace(FOUR, engine="CONSISTENT_HASHING"), True),
        (FOUR, IndexLayout("BLOOM"), False),  # a look-up finds keys in any file group
        (IndexLayout("BLOOM"), IndexLayout("SIMPLE"), False),
        (IndexLayout("BLOOM"), FOUR, True),  # file groups not named by bucket
        (IndexLayout("other"), FOUR, True),
    ],
)
def test_only_changes_that_would_move_stored_keys_are_refused(
    stored: IndexLayout, asked: IndexLayout, refused: bool
) -> None:
    reason = refusal("hudi_orders_mor", stored, asked, recorded=True)
    assert (reason is not None) == refused
    if reason:
        assert reason.startswith("hudi_orders_mor: ")
        assert str(asked) in reason
        assert "write a new table" in reason


def test_a_refusal_says_when_the_layout_was_read_from_file_names() -> None:
    reason = refusal("t", FOUR, replace(FOUR, buckets=8), recorded=False)
    assert reason is not None and "read from its file names" in reason


@pytest.mark.parametrize("count", ["eight", "", "0", "-4", "2.5"])
def test_a_bucket_count_that_is_not_one_is_refused_naming_the_option(count: str) -> None:
    """Refused before Spark starts (job.run builds every write's options first), where it
    failed the start with Python's int() error."""
    asked = replace(SINK, extra_options=(("hoodie.bucket.index.num.buckets", count),))
    with pytest.raises(IndexLayoutRefused, match=r"hoodie.bucket.index.num.buckets=.* is not a"):
        hudi_options(ORDERS, "MERGE_ON_READ", asked)
