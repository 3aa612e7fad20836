"""Read a whole Kinesis stream back and compare it with a load generator's ledger."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from loadgen.kinesis import list_shards
from loadgen.ledger import entry_data


def read_stream(client: Any, stream: str, idle_polls: int = 2) -> list[tuple[str, str, bytes]]:
    """Every record of every shard from TRIM_HORIZON: (shard_id, sequence_number, data)."""
    out: list[tuple[str, str, bytes]] = []
    for shard in list_shards(client, stream):
        it = client.get_shard_iterator(
            StreamName=stream, ShardId=shard["ShardId"], ShardIteratorType="TRIM_HORIZON"
        )["ShardIterator"]
        idle = 0
        while it and idle < idle_polls:
            resp = client.get_records(ShardIterator=it, Limit=10_000)
            recs = resp["Records"]
            out.extend((shard["ShardId"], r["SequenceNumber"], bytes(r["Data"])) for r in recs)
            it = resp.get("NextShardIterator")
            if recs or resp.get("MillisBehindLatest", 0) > 0:
                idle = 0
            else:
                idle += 1
    return out


@dataclass
class StreamDiff:
    matched: int = 0
    missing_on_stream: int = 0  # acknowledged in the ledger, not read back
    not_in_ledger: int = 0  # read back, not an acknowledged ledger record
    data_mismatch: int = 0  # same shard/sequence number, different bytes
    samples: list[Any] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not (self.missing_on_stream or self.not_in_ledger or self.data_mismatch)


def compare_stream(
    stream_records: Iterable[tuple[str, str, bytes]], ledger_entries: Iterable[Mapping[str, Any]]
) -> StreamDiff:
    """Record for record: (shard_id, sequence_number) -> bytes, both ways."""
    ledger: dict[tuple[str, str], bytes] = {}
    for e in ledger_entries:
        if e.get("acked"):
            ledger[(str(e["shard_id"]), str(e["sequence_number"]))] = entry_data(dict(e))
    d = StreamDiff()
    for shard, seq, data in stream_records:
        want = ledger.pop((shard, seq), None)
        if want is None:
            d.not_in_ledger += 1
            if len(d.samples) < 5:
                d.samples.append(("not_in_ledger", shard, seq, data[:100]))
        elif want != data:
            d.data_mismatch += 1
            if len(d.samples) < 5:
                d.samples.append(("mismatch", shard, seq, want[:100], data[:100]))
        else:
            d.matched += 1
    d.missing_on_stream = len(ledger)
    for k in list(ledger)[:5]:
        d.samples.append(("missing_on_stream", *k))
    return d
