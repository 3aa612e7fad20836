"""PutRecords retries against a throttling fake, and shard routing."""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

import pytest
from botocore.exceptions import ClientError, EndpointConnectionError

from loadgen.kinesis import (
    CallReport,
    FailedRecords,
    RetryPolicy,
    ShardRouter,
    put_records_with_retry,
)

pytestmark = pytest.mark.unit


@dataclass
class R:
    data: bytes
    partition_key: str


def throttle_error(code: str = "ProvisionedThroughputExceededException") -> ClientError:
    return ClientError({"Error": {"Code": code, "Message": "slow down"}}, "PutRecords")


class ThrottlingFake:
    """Fails whole calls (scripted) and individual records (a share of each call),
    and keeps what it accepted, like a shard would."""

    def __init__(
        self,
        call_errors: list[Exception | None] | None = None,
        record_fail_rate: float = 0.0,
        fail_forever: set[bytes] | None = None,
        seed: int = 1,
    ) -> None:
        self.call_errors = list(call_errors or [])
        self.record_fail_rate = record_fail_rate
        self.fail_forever = fail_forever or set()
        self.rng = random.Random(seed)
        self.calls: list[list[dict[str, Any]]] = []
        self.stored: list[tuple[str, bytes]] = []

    def put_records(self, StreamName: str, Records: list[dict[str, Any]]) -> dict[str, Any]:
        self.calls.append(Records)
        assert len(Records) <= 500
        if self.call_errors:
            err = self.call_errors.pop(0)
            if err is not None:
                raise err
        out, failed = [], 0
        for e in Records:
            if e["Data"] in self.fail_forever or self.rng.random() < self.record_fail_rate:
                failed += 1
                out.append(
                    {
                        "ErrorCode": "ProvisionedThroughputExceededException",
                        "ErrorMessage": "Rate exceeded for shard",
                    }
                )
            else:
                seq = str(len(self.stored) + 1).zfill(20)
                self.stored.append((seq, e["Data"]))
                out.append({"ShardId": "shardId-000000000000", "SequenceNumber": seq})
        return {"FailedRecordCount": failed, "Records": out}


def run(
    fake: ThrottlingFake, recs: list[R], policy: RetryPolicy | None = None
) -> tuple[list[Any], list[CallReport], list[float]]:
    reports: list[CallReport] = []
    sleeps: list[float] = []
    res = put_records_with_retry(
        fake, "s", recs, policy or RetryPolicy(max_attempts=10), report=reports.append,
        sleep=sleeps.append, rng=random.Random(0),
    )  # fmt: skip
    return res, reports, sleeps


def test_partial_failures_are_retried_until_all_acked() -> None:
    recs = [R(f"r{i}".encode(), f"k{i}") for i in range(300)]
    fake = ThrottlingFake(record_fail_rate=0.3)
    res, reports, sleeps = run(fake, recs)
    assert all(r.acked for r in res)
    # each record stored exactly once, and every result points at its own bytes
    stored = dict(fake.stored)
    assert sorted(stored.values()) == sorted(r.data for r in recs)
    for rec, r in zip(recs, res, strict=True):
        assert stored[r.sequence_number] == rec.data
    # only the failed records are resent
    assert len(fake.calls[0]) == 300
    assert all(len(b) < len(a) for a, b in zip(fake.calls, fake.calls[1:], strict=False))
    # every call is reported; calls with failed records as failures
    assert len(reports) == len(fake.calls)
    assert reports[0].name == "PutRecords" and reports[1].name == "PutRecords retry"
    assert all(isinstance(r.exception, FailedRecords) for r in reports[:-1])
    assert reports[-1].exception is None
    assert len(sleeps) == len(fake.calls) - 1
    assert max(res_.attempts for res_ in res) == len(fake.calls)


def test_throttled_calls_back_off_exponentially_then_succeed() -> None:
    fake = ThrottlingFake(
        call_errors=[throttle_error(), throttle_error("LimitExceededException"), None]
    )
    recs = [R(b"a", "k1"), R(b"b", "k2")]
    policy = RetryPolicy(max_attempts=5, base_delay=0.1, max_delay=10)
    res, reports, sleeps = run(fake, recs, policy)
    assert all(r.acked for r in res)
    assert len(fake.calls) == 3
    assert [r.failed for r in reports] == [2, 2, 0]
    assert isinstance(reports[0].exception, ClientError)
    assert 0 <= sleeps[0] <= 0.1 and 0 <= sleeps[1] <= 0.2  # full jitter, doubling cap


def test_records_failing_after_max_attempts_are_returned_failed() -> None:
    recs = [R(b"good", "k1"), R(b"cursed", "k2")]
    fake = ThrottlingFake(fail_forever={b"cursed"})
    res, reports, _ = run(fake, recs, RetryPolicy(max_attempts=4))
    assert res[0].acked and res[0].attempts == 1
    assert not res[1].acked
    assert res[1].error_code == "ProvisionedThroughputExceededException"
    assert res[1].attempts == 4
    assert len(reports) == 4 and all(r.exception is not None for r in reports)


def test_throttled_forever_fails_every_record() -> None:
    fake = ThrottlingFake(call_errors=[throttle_error()] * 10)
    res, reports, sleeps = run(fake, [R(b"a", "k")], RetryPolicy(max_attempts=3))
    assert not res[0].acked and res[0].error_code == "ProvisionedThroughputExceededException"
    assert len(reports) == 3 and len(sleeps) == 2


def test_non_retryable_errors_fail_at_once() -> None:
    fake = ThrottlingFake(call_errors=[throttle_error("ResourceNotFoundException")])
    res, reports, sleeps = run(fake, [R(b"a", "k")])
    assert not res[0].acked and res[0].error_code == "ResourceNotFoundException"
    assert len(fake.calls) == 1 and not sleeps and len(reports) == 1


def test_connection_errors_are_retried_and_marked_ambiguous() -> None:
    fake = ThrottlingFake(call_errors=[EndpointConnectionError(endpoint_url="http://x"), None])
    res, reports, _ = run(fake, [R(b"a", "k")])
    assert res[0].acked and res[0].ambiguous and res[0].attempts == 2
    assert len(reports) == 2


def test_router_spreads_keys_evenly_and_keeps_a_key_on_its_shard() -> None:
    top = 2**128 - 1
    n = 4
    shards = [
        {"HashKeyRange": {"StartingHashKey": str(i * (top // n) + (i > 0)),
                          "EndingHashKey": str((i + 1) * (top // n) if i < n - 1 else top)}}
        for i in range(n)
    ]  # fmt: skip
    router = ShardRouter(shards)
    keys = [f"key-{i}" for i in range(1000)]
    hks = [router.hash_key(k) for k in keys]
    counts: dict[str | None, int] = {}
    for h in hks:
        counts[h] = counts.get(h, 0) + 1
    assert sorted(counts.values()) == [250, 250, 250, 250]
    assert [router.hash_key(k) for k in keys] == hks  # sticky
    for h in counts:
        assert h is not None
        assert any(
            int(s["HashKeyRange"]["StartingHashKey"]) <= int(h)
            <= int(s["HashKeyRange"]["EndingHashKey"])
            for s in shards
        )  # fmt: skip
    assert ShardRouter([]).hash_key("k") is None
