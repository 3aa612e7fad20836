"""Send records the way the Kinesis Producer Library does: many user records in one
aggregated Kinesis record (aws-kinesis-agg writes KPL's format).

Like KPL, an aggregate holds user records bound for one shard only (here: one
ShardRouter hash key), in their send order, so every key's records keep their order; the
aggregate is sent with that shard's hash key. After the put, each user record's place is
its aggregate's sequence number and its index in it (the sub-sequence number the KCL and
the job's Kinesis source give it).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Final

from aws_kinesis_agg.aggregator import RecordAggregator

from loadgen.models import Record

# KPL's own default cap per aggregate is 50 KiB; well under the 1 MiB record limit.
MAX_AGGREGATE_BYTES: Final = 50 * 1024


@dataclass(frozen=True)
class Aggregate:
    """One Kinesis record holding `members`, in order (member i is sub-sequence i)."""

    data: bytes
    partition_key: str
    members: tuple[Record, ...]


def aggregate(
    records: Sequence[Record],
    per_aggregate: int,
    shard_of: Callable[[str], str | None],
    max_bytes: int = MAX_AGGREGATE_BYTES,
) -> list[Aggregate]:
    """Records grouped by shard (order kept within each), at most `per_aggregate` and about
    `max_bytes` per aggregate; a record too big to share one is sent alone in its own."""
    by_shard: dict[str | None, list[Record]] = {}
    for rec in records:
        by_shard.setdefault(shard_of(rec.partition_key), []).append(rec)
    out: list[Aggregate] = []
    for members in by_shard.values():
        chunk: list[Record] = []
        size = 0
        for rec in members:
            if chunk and (len(chunk) >= per_aggregate or size + len(rec.data) > max_bytes):
                out.append(_build(chunk))
                chunk, size = [], 0
            chunk.append(rec)
            size += len(rec.data) + len(rec.partition_key)
        if chunk:
            out.append(_build(chunk))
    return out


def _build(members: list[Record]) -> Aggregate:
    aggregator = RecordAggregator()
    for rec in members:
        aggregator.add_user_record(rec.partition_key, rec.data)
    partition_key, _hash_key, data = aggregator.clear_and_get().get_contents()
    return Aggregate(bytes(data), str(partition_key), tuple(members))
