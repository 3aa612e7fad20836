"""PutRecords limits: 500 records, 5 MiB per call (data + partition key), 1 MiB per record."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from loadgen.batching import BatchLimits, MiB, record_size, split_batches

pytestmark = pytest.mark.unit


@dataclass
class R:
    data: bytes
    partition_key: str


def test_at_most_500_records_per_call() -> None:
    recs = [R(b"x", str(i)) for i in range(1234)]
    batches, too_big = split_batches(recs)
    assert [len(b) for b in batches] == [500, 500, 234]
    assert not too_big
    assert [r for b in batches for r in b] == recs  # order kept


def test_at_most_5_mib_per_call_counting_partition_keys() -> None:
    # 11 records of exactly 0.5 MiB (data + key): 10 fit in one call, not 11
    key = "k" * 10
    recs = [R(b"x" * (MiB // 2 - len(key)), key) for _ in range(11)]
    assert record_size(recs[0]) == MiB // 2
    batches, _ = split_batches(recs)
    assert [len(b) for b in batches] == [10, 1]
    for b in batches:
        assert sum(record_size(r) for r in b) <= 5 * MiB
    # one byte more per record: only 9 fit
    recs = [R(b"x" * (MiB // 2 - len(key) + 1), key) for _ in range(11)]
    assert [len(b) for b in split_batches(recs)[0]] == [9, 2]


def test_records_over_1_mib_are_returned_not_dropped() -> None:
    big = R(b"x" * MiB, "k")  # 1 MiB + 1 byte with its key
    ok = R(b"y" * (MiB - 1), "k")  # exactly 1 MiB
    batches, too_big = split_batches([ok, big, ok])
    assert too_big == [big]
    assert batches == [[ok, ok]]


def test_custom_limits_and_validation() -> None:
    recs = [R(b"abc", "k") for _ in range(10)]
    batches, _ = split_batches(recs, BatchLimits(max_records=3))
    assert [len(b) for b in batches] == [3, 3, 3, 1]
    batches, _ = split_batches(recs, BatchLimits(max_bytes=8, max_record_bytes=4))
    assert [len(b) for b in batches] == [2] * 5
    with pytest.raises(ValueError):
        BatchLimits(max_records=501)
    with pytest.raises(ValueError):
        BatchLimits(max_bytes=6 * MiB)
