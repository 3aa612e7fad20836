"""lakehouse.bench.table_freshness: each row's commit completion minus its arrival, read
back from a table's timeline and rows."""

from datetime import UTC, datetime

import pyarrow as pa
import pytest

from lakehouse.bench.table_freshness import (
    commit_and_arrival,
    completed_at,
    measure,
    row_freshness,
    timeline_objects,
)

pytestmark = pytest.mark.unit


def test_only_completed_instants_of_the_tables_actions_have_a_completion_time() -> None:
    objects = [
        ("20261126100000000.commit", 110.0),
        ("20261126100000000.commit.requested", 100.0),
        ("20261126100000000.inflight", 101.0),
        ("20261126100500000.inflight", 300.0),  # still writing
        ("20261126100600000.clean", 400.0),
        ("hoodie.properties", 5.0),
    ]
    assert completed_at(objects, ("commit",)) == {"20261126100000000": 110.0}
    assert completed_at(objects, ("deltacommit",)) == {}


def test_each_row_in_the_window_counts_once_and_an_archived_commit_is_counted_apart() -> None:
    completed = {"c1": 105.0, "c2": 112.0}
    rows = [("c1", 100.0), ("c1", 103.5), ("c2", 110.0), ("gone", 104.0), ("c2", 99.0)]
    samples, unresolved = row_freshness(rows, completed, since=100.0, until=111.0)
    assert sorted(samples) == [(1.5, 1), (2.0, 1), (5.0, 1)]
    assert unresolved == 1  # the row of "gone"; the row of 99.0 is before the window


def test_rows_are_read_from_arrow_batches_whatever_the_timestamp_unit() -> None:
    arrived = datetime(2026, 11, 26, 10, 0, 1, 500_000, tzinfo=UTC)
    for unit in ("ms", "us"):
        batch = pa.RecordBatch.from_pydict(
            {
                "_hoodie_commit_time": ["c1", "c2", None],
                "_arrival_ts": pa.array([arrived, None, arrived], pa.timestamp(unit, "UTC")),
            }
        )
        assert commit_and_arrival([batch]) == [("c1", arrived.timestamp())]


class Listing:
    """An S3 client's list_objects_v2 paginator over one page."""

    def __init__(self, keys: dict[str, float]) -> None:
        self.keys = keys
        self.asked: dict = {}

    def get_paginator(self, _name: str) -> "Listing":
        return self

    def paginate(self, **kwargs: str) -> list[dict]:
        self.asked = kwargs
        contents = [
            {"Key": k, "LastModified": datetime.fromtimestamp(t, UTC)}
            for k, t in self.keys.items()
            if k.startswith(kwargs["Prefix"]) and "/" not in k[len(kwargs["Prefix"]) :]
        ]
        return [{"Contents": contents}]


def test_a_tables_freshness_from_its_timeline_and_rows() -> None:
    s3 = Listing(
        {
            "wh/t/.hoodie/20261126100000000.commit": 1_000.0,
            "wh/t/.hoodie/20261126100010000.commit": 1_010.0,
            "wh/t/.hoodie/metadata/.hoodie/20261126100000000.deltacommit": 1_000.0,
        }
    )
    batch = pa.RecordBatch.from_pydict(
        {
            "_hoodie_commit_time": ["20261126100000000", *["20261126100010000"] * 2],
            "_arrival_ts": pa.array([998_000, 1_001_000, 1_009_000], pa.timestamp("ms")),
        }
    )
    read = {"s3a://bucket/wh/t": [batch]}
    found = measure(s3, read.__getitem__, "s3a://bucket/wh/t", "COPY_ON_WRITE", 990.0, 1_020.0)
    assert s3.asked == {"Bucket": "bucket", "Prefix": "wh/t/.hoodie/", "Delimiter": "/"}
    assert found == {"p50": 2.0, "p95": 9.0, "max": 9.0, "records": 3, "unresolved": 0}
    listed = timeline_objects(s3, "s3://bucket/wh/t/")
    assert listed == [("20261126100000000.commit", 1_000.0), ("20261126100010000.commit", 1_010.0)]
