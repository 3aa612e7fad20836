"""loadgen.kpl: records aggregated as KPL does, one shard per aggregate, order kept."""

from __future__ import annotations

import hashlib

import pytest
from aws_kinesis_agg.aggregator import messages_pb2  # the module fixes its sys.path first

from loadgen.kpl import aggregate
from loadgen.models import Record

pytestmark = pytest.mark.unit


def rec(n: int, key: str) -> Record:
    return Record(f'{{"n":{n}}}'.encode(), key, "orders", "valid", n)


def user_records(data: bytes) -> list[tuple[str, bytes]]:
    """The aggregate read back with aws-kinesis-agg's own protobuf messages (the job's Java
    reader is checked against the same library's output in KplAggregateTest)."""
    assert hashlib.md5(data[4:-16]).digest() == data[-16:]
    message = messages_pb2.AggregatedRecord()
    message.ParseFromString(data[4:-16])
    keys = list(message.partition_key_table)
    return [(keys[r.partition_key_index], r.data) for r in message.records]


def test_records_are_grouped_by_shard_in_order_and_capped() -> None:
    records = [rec(n, f"k{n % 3}") for n in range(10)]
    shard_of = {"k0": "A", "k1": "B", "k2": "A"}.get
    aggregates = aggregate(records, per_aggregate=3, shard_of=shard_of)
    assert [[r.seq for r in a.members] for a in aggregates] == [
        [0, 2, 3],
        [5, 6, 8],
        [9],
        [1, 4, 7],
    ]
    for agg in aggregates:
        assert agg.data[:4] == bytes.fromhex("f3899ac2")
        assert agg.partition_key == agg.members[0].partition_key  # routes to its shard
        assert user_records(agg.data) == [(r.partition_key, r.data) for r in agg.members]


def test_an_aggregate_stays_under_its_byte_cap() -> None:
    records = [Record(b"x" * 400, "k", "orders", "valid", n) for n in range(10)]
    aggregates = aggregate(records, per_aggregate=100, shard_of=lambda _k: "A", max_bytes=1000)
    assert [len(a.members) for a in aggregates] == [2, 2, 2, 2, 2]
