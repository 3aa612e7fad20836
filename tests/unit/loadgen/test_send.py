"""loadgen.send: a file of JSON lines classified as the job would, then sent with the load
generator's pieces (a fake Kinesis: no services)."""

from __future__ import annotations

import io
import json
from typing import Any

import pytest

from lakehouse_tables import rules
from lakehouse_tables.declarations import load_tables, parse_tables
from loadgen import send
from loadgen.kinesis import RetryPolicy, ShardRouter

pytestmark = pytest.mark.unit

TABLES = load_tables()
SHARDS = [
    {
        "ShardId": f"shardId-00000000000{i}",
        "HashKeyRange": {"StartingHashKey": lo, "EndingHashKey": hi},
    }
    for i, (lo, hi) in enumerate([("0", str(2**127 - 1)), (str(2**127), str(2**128 - 1))])
]


def order(key: str, ts: str = "2026-01-02T03:04:05.000Z", **extra: Any) -> bytes:
    """A ticker event (its record key: event_id)."""
    event = {
        "event_type": "ticker",
        "event_id": key,
        "ticker": "ABC",
        "price": 1.5,
        "event_time": ts,
        **extra,
    }
    return json.dumps(event).encode()


def lines(*records: bytes) -> list[tuple[int, bytes]]:
    return list(send.read_lines(io.BytesIO(b"\n".join(records) + b"\n")))


class FakeKinesis:
    """Acknowledges every entry, except those whose data is in `refuse` (every attempt)
    and, on the first attempt only, those in `throttle_once`."""

    def __init__(self, refuse: set[bytes] | None = None, throttle_once: set[bytes] | None = None):
        self.refuse, self.throttle_once = set(refuse or ()), set(throttle_once or ())
        self.calls: list[list[dict[str, Any]]] = []
        self.seq = 0

    def put_records(self, StreamName: str, Records: list[dict[str, Any]]) -> dict[str, Any]:
        self.calls.append(Records)
        out, failed = [], 0
        for entry in Records:
            if entry["Data"] in self.refuse or entry["Data"] in self.throttle_once:
                self.throttle_once.discard(entry["Data"])
                out.append(
                    {"ErrorCode": "ProvisionedThroughputExceededException", "ErrorMessage": "slow"}
                )
                failed += 1
                continue
            self.seq += 1
            shard = (
                "shardId-000000000000"
                if int(entry["ExplicitHashKey"]) < 2**127
                else "shardId-000000000001"
            )
            out.append({"ShardId": shard, "SequenceNumber": str(self.seq)})
        return {"FailedRecordCount": failed, "Records": out}


def fast() -> RetryPolicy:
    return RetryPolicy(max_attempts=3, base_delay=0, max_delay=0)


def test_lines_keep_their_numbers_and_bytes_and_blank_lines_are_skipped() -> None:
    text = b'{"a":1}\r\n\n   \n{"b": 2}  \n{"c":3}'
    assert list(send.read_lines(io.BytesIO(text))) == [
        (1, b'{"a":1}'),
        (4, b'{"b": 2}  '),
        (5, b'{"c":3}'),
    ]


def test_each_line_is_classified_as_the_job_would_and_bad_ones_are_skipped() -> None:
    plan = send.plan(
        lines(order("AAA"), b"not json", order("BBB", ts="yesterday"), order(""), order("CCC")),
        TABLES,
    )
    assert [r.seq for r in plan.records] == [1, 5]
    assert [(b.number, b.kind) for b in plan.bad] == [
        (2, rules.NOT_JSON),
        (3, rules.INVALID_TIME),
        (4, rules.MISSING_KEY),
    ]
    assert plan.bad[0].reason == "not_json (rule 4: not exactly one JSON object)"
    assert [r.partition_key for r in plan.records] == ["AAA", "CCC"]  # the record key
    assert plan.records[0].data == order("AAA")  # exactly as written


def test_send_invalid_sends_the_bad_lines_too_with_a_key_where_there_is_one() -> None:
    plan = send.plan(lines(b"not json", order("AAA", price="x")), TABLES, send_invalid=True)
    assert [(r.seq, r.partition_key, r.kind) for r in plan.records] == [
        (1, "line-1", rules.NOT_JSON),
        (2, "AAA", rules.WRONG_TYPES),
    ]
    assert all(bad.sent for bad in plan.bad)


def test_a_long_key_is_hashed_to_fit_kinesis() -> None:
    key = send.partition_key({"event_type": "ticker", "event_id": "x" * 300}, TABLES, 1)
    assert len(key) == 64
    assert send.partition_key({"event_type": ["odd"]}, TABLES, 7) == "line-7"


def test_entries_bound_to_another_stream_are_not_valid_on_this_one() -> None:
    tables = parse_tables(
        """
event_types:
  a:
    table: a
    schema: {id: string, ts: timestamp}
    record_key: id
    precombine: ts
    partition_by: {name: d, from: ts}
  b:
    table: b
    stream: "cdc.*"
    schema: {id: string, ts: timestamp}
    record_key: id
    precombine: ts
    partition_by: {name: d, from: ts}
"""
    )
    assert list(send.for_stream(tables, "events")) == ["a"]
    assert list(send.for_stream(tables, "cdc.public.b")) == ["a", "b"]


def test_records_are_acked_retried_and_summed_per_entry_and_shard() -> None:
    records = [order(f"K{i}") for i in range(6)]
    plan = send.plan(lines(*records, b"{}"), TABLES)
    kinesis = FakeKinesis(refuse={records[5]}, throttle_once={records[0]})
    results = send.send(kinesis, "events", plan.records, ShardRouter(SHARDS), policy=fast())
    summary = send.summarise(plan, results)
    assert summary.total_acked == 5 and summary.acked == {"ticker": 5}
    assert sum(summary.shards.values()) == 5 and len(summary.shards) == 2
    assert [(n, r.error_code, r.attempts) for n, r in summary.failed] == [
        (6, "ProvisionedThroughputExceededException", 3)
    ]
    assert [s.number for s in summary.skipped] == [7]
    assert summary.exit_code == 1
    assert len(kinesis.calls) == 3  # one call, then the throttled and refused, then refused
    problems = send.problem_lines(plan, summary)
    assert problems[0].startswith("line 7: skipped: unknown_event_type (rule 5")
    assert problems[1] == (
        "line 6: not acknowledged after 3 attempts: ProvisionedThroughputExceededException: slow"
    )
    report = send.report("events", plan, summary)
    assert report[0] == "5 of 6 records acknowledged by stream events; 1 lines skipped; 1 failed"
    assert report[1].split() == ["ticker", "5"]


def test_a_key_stays_on_one_shard_and_everything_acked_exits_0() -> None:
    plan = send.plan(
        lines(*[order("SAME", ts=f"2026-01-02T03:04:0{i}.000Z") for i in range(5)]), TABLES
    )
    kinesis = FakeKinesis()
    summary = send.summarise(plan, send.send(kinesis, "events", plan.records, ShardRouter(SHARDS)))
    assert len(summary.shards) == 1 and summary.exit_code == 0


def test_kpl_aggregates_carry_n_records_each() -> None:
    records = [order(f"K{i % 2}", ts=f"2026-01-02T03:04:0{i}.000Z") for i in range(6)]
    plan = send.plan(lines(*records), TABLES)
    kinesis = FakeKinesis()
    results = send.send(kinesis, "events", plan.records, ShardRouter(SHARDS), kpl_aggregate=2)
    entries = [entry for call in kinesis.calls for entry in call]
    assert len(entries) == 4 and all(
        e["Data"].startswith(bytes.fromhex("f3899ac2")) for e in entries
    )
    assert sorted(r.seq for r, res in results if res.acked) == [1, 2, 3, 4, 5, 6]
    assert send.summarise(plan, results).total_acked == 6
