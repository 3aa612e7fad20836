"""lakehouse_job.sinks: where a batch's raw copy goes."""

import pytest

from lakehouse_job.hudi_options import SinkSettings
from lakehouse_job.sinks import raw_batch_path
from lakehouse_tables.declarations import load_tables

pytestmark = pytest.mark.unit


def sink(checkpoint: str) -> SinkSettings:
    return SinkSettings("s3a://b/w", "s3a://b/raw/", "db", "", checkpoint=checkpoint)


def test_a_replayed_batch_rewrites_its_folder_and_a_new_checkpoint_gets_new_ones() -> None:
    orders = load_tables()["orders"]
    first = raw_batch_path(sink("s3a://b/checkpoints/events-1"), orders, 0)
    assert first == raw_batch_path(sink("s3a://b/checkpoints/events-1"), orders, 0)
    assert first.startswith("s3a://b/raw/hudi_orders/checkpoint=")
    assert first.endswith("/batch_id=0")
    assert first != raw_batch_path(sink("s3a://b/checkpoints/events-2"), orders, 0)
