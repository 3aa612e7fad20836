"""Kinesis client, shard routing and PutRecords with retries.

Botocore's own retries are switched off: every PutRecords attempt goes through
`put_records_with_retry`, which retries throttled/failed records with
exponential backoff and full jitter, reports every call (attempt) to a callback
(Locust statistics), and returns one final result per record. A record that
still fails after the last attempt is returned as failed, never dropped.

Under Locust, import locust (gevent monkey patching) before this module.
"""

from __future__ import annotations

import os
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import boto3
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError

from loadgen.batching import HasPayload, record_size

# whole-call errors worth retrying; anything else (ResourceNotFound, Validation...) fails the batch
RETRYABLE_CALL_ERRORS = frozenset(
    {
        "ProvisionedThroughputExceededException",
        "LimitExceededException",
        "ThrottlingException",
        "Throttling",
        "KMSThrottlingException",
        "InternalFailure",
        "InternalServerError",
        "ServiceUnavailable",
        "RequestTimeout",
    }
)


def make_client(
    endpoint: str | None = None,
    region: str = "us-east-1",
    access_key: str | None = None,
    secret_key: str | None = None,
    max_pool_connections: int = 50,
) -> Any:
    """A boto3 Kinesis client without botocore retries. With an endpoint (emulator) and
    no credentials anywhere, dummy credentials are used."""
    if endpoint and not access_key and not os.environ.get("AWS_ACCESS_KEY_ID"):
        access_key, secret_key = "test", "test"
    cfg = Config(
        retries={"total_max_attempts": 1, "mode": "standard"},
        max_pool_connections=max_pool_connections,
        connect_timeout=5,
        read_timeout=30,
    )
    return boto3.client(
        "kinesis",
        endpoint_url=endpoint or None,
        region_name=region,
        aws_access_key_id=access_key or None,
        aws_secret_access_key=secret_key or None,
        config=cfg,
    )


# --------------------------------------------------------------------------- streams


def list_open_shards(client: Any, stream: str) -> list[dict[str, Any]]:
    shards: list[dict[str, Any]] = []
    kwargs: dict[str, Any] = {"StreamName": stream}
    while True:
        resp = client.list_shards(**kwargs)
        shards.extend(resp["Shards"])
        token = resp.get("NextToken")
        if not token:
            break
        kwargs = {"NextToken": token}
    return [s for s in shards if "EndingSequenceNumber" not in s["SequenceNumberRange"]]


def ensure_stream(client: Any, stream: str, shards: int = 2, timeout: float = 60) -> None:
    """Create the stream if it does not exist and wait until it is ACTIVE."""
    try:
        client.create_stream(StreamName=stream, ShardCount=shards)
    except ClientError as e:
        if e.response["Error"]["Code"] != "ResourceInUseException":
            raise
    deadline = time.monotonic() + timeout
    while True:
        status = client.describe_stream_summary(StreamName=stream)["StreamDescriptionSummary"][
            "StreamStatus"
        ]
        if status == "ACTIVE":
            return
        if time.monotonic() > deadline:
            raise TimeoutError(f"stream {stream} still {status} after {timeout}s")
        time.sleep(0.2)


def read_stream(client: Any, stream: str, idle_polls: int = 2) -> list[tuple[str, str, bytes]]:
    """Every record of every shard from TRIM_HORIZON: (shard_id, sequence_number, data)."""
    out: list[tuple[str, str, bytes]] = []
    shards: list[dict[str, Any]] = []
    kwargs: dict[str, Any] = {"StreamName": stream}
    while True:
        resp = client.list_shards(**kwargs)
        shards.extend(resp["Shards"])
        if not resp.get("NextToken"):
            break
        kwargs = {"NextToken": resp["NextToken"]}
    for shard in shards:
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


# --------------------------------------------------------------------------- routing


class ShardRouter:
    """Spreads partition keys evenly over the open shards: each new key is assigned the
    next shard round-robin and keeps it (sent with ExplicitHashKey = the middle of the
    shard's hash range), so records of one key stay on one shard, in send order."""

    def __init__(self, shards: Sequence[dict[str, Any]], max_keys: int = 1_000_000) -> None:
        ranges = sorted(
            (int(s["HashKeyRange"]["StartingHashKey"]), int(s["HashKeyRange"]["EndingHashKey"]))
            for s in shards
        )
        self.hash_keys = [str((lo + hi) // 2) for lo, hi in ranges]
        self.max_keys = max_keys
        self._assigned: dict[str, str] = {}
        self._next = 0

    def hash_key(self, partition_key: str) -> str | None:
        if not self.hash_keys:
            return None
        hk = self._assigned.get(partition_key)
        if hk is None:
            if len(self._assigned) >= self.max_keys:
                self._assigned.clear()
            hk = self.hash_keys[self._next % len(self.hash_keys)]
            self._next += 1
            self._assigned[partition_key] = hk
        return hk


# --------------------------------------------------------------------------- put + retry


@dataclass(frozen=True)
class RetryPolicy:
    max_attempts: int = 8
    base_delay: float = 0.05
    max_delay: float = 2.0

    def backoff(self, attempt: int, rng: random.Random) -> float:
        """Full jitter: uniform(0, min(max_delay, base * 2**(attempt-1)))."""
        return rng.uniform(0, min(self.max_delay, self.base_delay * 2 ** (attempt - 1)))


@dataclass(slots=True)
class PutResult:
    shard_id: str | None = None
    sequence_number: str | None = None
    error_code: str | None = None
    error_message: str | None = None
    attempts: int = 0
    # an earlier attempt ended without an answer (timeout, connection reset): the record
    # may also be on the stream from that attempt
    ambiguous: bool = False

    @property
    def acked(self) -> bool:
        return self.sequence_number is not None


@dataclass(frozen=True)
class CallReport:
    """One PutRecords call, as reported to Locust."""

    name: str  # "PutRecords" or "PutRecords retry"
    response_time_ms: float
    request_bytes: int
    records: int
    failed: int
    exception: Exception | None


class FailedRecords(Exception):
    """A PutRecords call that answered with FailedRecordCount > 0."""


Reporter = Callable[[CallReport], None]


def _noop(_: CallReport) -> None:
    return None


def put_records_with_retry(
    client: Any,
    stream: str,
    records: Sequence[HasPayload],
    policy: RetryPolicy = RetryPolicy(),
    router: ShardRouter | None = None,
    report: Reporter = _noop,
    sleep: Callable[[float], None] = time.sleep,
    rng: random.Random | None = None,
) -> list[PutResult]:
    """Send one batch (within the PutRecords limits); one PutResult per record, in order."""
    rng = rng or random.Random()
    entries: list[dict[str, Any]] = []
    sizes: list[int] = []
    for rec in records:
        e: dict[str, Any] = {"Data": rec.data, "PartitionKey": rec.partition_key}
        hk = router.hash_key(rec.partition_key) if router else None
        if hk is not None:
            e["ExplicitHashKey"] = hk
        entries.append(e)
        sizes.append(record_size(rec))
    results = [PutResult() for _ in records]
    pending = list(range(len(records)))
    attempt = 0
    while pending:
        attempt += 1
        name = "PutRecords" if attempt == 1 else "PutRecords retry"
        nbytes = sum(sizes[i] for i in pending)
        t0 = time.perf_counter()
        retry_all = False
        try:
            resp = client.put_records(StreamName=stream, Records=[entries[i] for i in pending])
        except ClientError as exc:
            elapsed = (time.perf_counter() - t0) * 1000
            err = exc.response.get("Error", {})
            code, msg = str(err.get("Code", "ClientError")), str(err.get("Message", ""))
            report(CallReport(name, elapsed, nbytes, len(pending), len(pending), exc))
            for i in pending:
                r = results[i]
                r.error_code, r.error_message, r.attempts = code, msg, attempt
            if code not in RETRYABLE_CALL_ERRORS:
                break
            retry_all = True
        except (BotoCoreError, OSError) as exc:  # connection refused/reset, timeouts
            elapsed = (time.perf_counter() - t0) * 1000
            report(CallReport(name, elapsed, nbytes, len(pending), len(pending), exc))
            for i in pending:
                r = results[i]
                r.error_code, r.error_message = type(exc).__name__, str(exc)
                r.attempts, r.ambiguous = attempt, True
            retry_all = True
        if retry_all:
            if attempt >= policy.max_attempts:
                break
            sleep(policy.backoff(attempt, rng))
            continue
        elapsed = (time.perf_counter() - t0) * 1000
        failed = int(resp.get("FailedRecordCount", 0) or 0)
        still: list[int] = []
        codes: dict[str, int] = {}
        for i, out in zip(pending, resp["Records"], strict=True):
            r = results[i]
            r.attempts = attempt
            if out.get("ErrorCode"):
                r.error_code, r.error_message = out["ErrorCode"], out.get("ErrorMessage")
                codes[out["ErrorCode"]] = codes.get(out["ErrorCode"], 0) + 1
                still.append(i)
            else:
                r.shard_id, r.sequence_number = out["ShardId"], out["SequenceNumber"]
                r.error_code = r.error_message = None
        exc2 = (
            FailedRecords(f"{len(still)}/{len(pending)} records failed: {codes}") if still else None
        )
        report(CallReport(name, elapsed, nbytes, len(pending), max(failed, len(still)), exc2))
        pending = still
        if pending:
            if attempt >= policy.max_attempts:
                break
            sleep(policy.backoff(attempt, rng))
    return results
