from __future__ import annotations

import pytest

from lakehouse_tables.locations import s3_location

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("s3a://lake/warehouse/lakehouse.db", ("lake", "warehouse/lakehouse.db")),
        ("s3://lake/jobs/orders/checkpoint/", ("lake", "jobs/orders/checkpoint")),
        ("s3://lake", ("lake", "")),
        ("s3://lake/", ("lake", "")),
        ("/tmp/checkpoint", None),
        ("file:///tmp/checkpoint", None),
        ("hdfs://nn/warehouse", None),
        ("s3://", None),
    ],
)
def test_s3_urls_become_a_bucket_and_a_key(url: str, expected: tuple[str, str] | None) -> None:
    assert s3_location(url) == expected
