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

from botocore.exceptions import BotoCoreError, ClientError

from lakehouse.core.clients import Endpoints, kinesis_client
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
    """A Kinesis client without botocore retries (put_records_with_retry does them); with
    an endpoint (an emulator) and no credentials anywhere, the emulator's test ones."""
    endpoints = Endpoints(
        region=region, kinesis=endpoint or None, kinesis_engine=os.environ.get("KINESIS_ENGINE", "")
    )
    return kinesis_client(
        endpoints,
        max_attempts=1,
        max_pool_connections=max_pool_connections,
        read_timeout=30,
        access_key=access_key,
        secret_key=secret_key,
    )


# --------------------------------------------------------------------------- streams


def list_shards(client: Any, stream: str) -> list[dict[str, Any]]:
    """Every shard of the stream, open and closed (ListShards, all pages)."""
    shards: list[dict[str, Any]] = []
    kwargs: dict[str, Any] = {"StreamName": stream}
    while True:
        resp = client.list_shards(**kwargs)
        shards.extend(resp["Shards"])
        token = resp.get("NextToken")
        if not token:
            return shards
        kwargs = {"NextToken": token}


def list_open_shards(client: Any, stream: str) -> list[dict[str, Any]]:
    return [
        s
        for s in list_shards(client, stream)
        if "EndingSequenceNumber" not in s["SequenceNumberRange"]
    ]


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
    entries, sizes = _request_entries(records, router)
    results = [PutResult() for _ in records]
    pending = list(range(len(records)))
    attempt = 0
    while pending:
        attempt += 1
        name = "PutRecords" if attempt == 1 else "PutRecords retry"
        nbytes = sum(sizes[i] for i in pending)
        t0 = time.perf_counter()
        try:
            resp = client.put_records(StreamName=stream, Records=[entries[i] for i in pending])
        except (ClientError, BotoCoreError, OSError) as exc:  # an error, or no answer at all
            elapsed = (time.perf_counter() - t0) * 1000
            report(CallReport(name, elapsed, nbytes, len(pending), len(pending), exc))
            if not _fail_whole_call(exc, results, pending, attempt):
                break
        else:
            elapsed = (time.perf_counter() - t0) * 1000
            failed = int(resp.get("FailedRecordCount", 0) or 0)
            still, codes = _take_response(resp, results, pending, attempt)
            exc2 = (
                FailedRecords(f"{len(still)}/{len(pending)} records failed: {codes}")
                if still
                else None
            )
            report(CallReport(name, elapsed, nbytes, len(pending), max(failed, len(still)), exc2))
            pending = still
        if pending:
            if attempt >= policy.max_attempts:
                break
            sleep(policy.backoff(attempt, rng))
    return results


def _request_entries(
    records: Sequence[HasPayload], router: ShardRouter | None
) -> tuple[list[dict[str, Any]], list[int]]:
    """PutRecords' entry for each record (with the router's ExplicitHashKey, if it has one
    for the key), and each record's size as Kinesis counts it."""
    entries: list[dict[str, Any]] = []
    sizes: list[int] = []
    for rec in records:
        e: dict[str, Any] = {"Data": rec.data, "PartitionKey": rec.partition_key}
        hk = router.hash_key(rec.partition_key) if router else None
        if hk is not None:
            e["ExplicitHashKey"] = hk
        entries.append(e)
        sizes.append(record_size(rec))
    return entries, sizes


def _fail_whole_call(
    exc: Exception, results: list[PutResult], pending: list[int], attempt: int
) -> bool:
    """Every pending record's result after a call that failed as a whole; whether the call
    may be retried. A ClientError names its code (retried if in RETRYABLE_CALL_ERRORS); a
    connection error is always retried and leaves the records ambiguous (they may have been
    written)."""
    if isinstance(exc, ClientError):
        err = exc.response.get("Error", {})
        code, msg = str(err.get("Code", "ClientError")), str(err.get("Message", ""))
        for i in pending:
            r = results[i]
            r.error_code, r.error_message, r.attempts = code, msg, attempt
        return code in RETRYABLE_CALL_ERRORS
    for i in pending:
        r = results[i]
        r.error_code, r.error_message = type(exc).__name__, str(exc)
        r.attempts, r.ambiguous = attempt, True
    return True


def _take_response(
    resp: dict[str, Any], results: list[PutResult], pending: list[int], attempt: int
) -> tuple[list[int], dict[str, int]]:
    """Each pending record's outcome from a PutRecords response; the records that failed
    (to retry) and how many failed with each error code."""
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
    return still, codes
