"""Faults of Kinesis itself (marker `faults`): the errors it answers with, and resharding.

Errors come from tests/support/kinesis_proxy.py, a proxy in front of the real engine that
answers a share of the job's calls with Kinesis' own errors. Each case the job is to survive
ends with the sinks holding exactly the scripted scenario's state; past the retry bound, the
job must stop, saying why.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import threading
import time
from collections import defaultdict
from itertools import pairwise
from typing import Any

import pytest

from tests.support import kinesis_proxy as kp
from tests.support import scenario as scripted
from tests.support.checks import assert_sinks_hold
from tests.support.pipeline import Run, tail, wait_for

pytestmark = pytest.mark.faults

KINDS = ("throttled", "expired_iterator", "limit_exceeded", "internal_failure")


def stop(job: subprocess.Popen) -> int:
    """SIGTERM to the job's group, as its supervisor would; its exit code."""
    if job.poll() is None:
        os.killpg(job.pid, signal.SIGTERM)
    try:
        return job.wait(180)
    except subprocess.TimeoutExpired:
        os.killpg(job.pid, signal.SIGKILL)
        job.wait(30)
        raise AssertionError("the job did not stop within 180 s of SIGTERM") from None


def test_throttles_expired_iterators_and_500s_lose_and_duplicate_nothing(run: Run) -> None:
    s = scripted.build(orders=300, ticks=60, seed=53)
    half = len(s.records) // 2
    run.put(s.records[:half])
    faults = [
        kp.throttling(0.2),
        kp.expired_iterator(0.1),
        kp.limit_exceeded(0.2),
        # Outages outlast the SDK's own retries (3 of them, within about 3.5 s for a
        # throttle, well under 1 s for a 500): only the source's retries carry reads over.
        kp.throttling(0.05, lasting_s=5),
        kp.internal_failure(0.02, lasting_s=3),
    ]
    with kp.KinesisFaultProxy(faults, seed=53) as proxy:
        job = run.start_job(
            "--trigger-seconds",
            "1",
            "--max-records-per-shard",
            "250",
            "--kinesis-endpoint",
            proxy.endpoint,
            "--final-compaction",  # on its SIGTERM stop, for the checks' read-optimized view
        )
        try:
            wait_for(lambda: run.batches_done() >= 1 or job.poll() is not None, 300, "a batch")
            run.put(s.records[half:], start=half)

            def done() -> bool:
                return job.poll() is not None or (
                    run.caught_up()
                    and all(proxy.injected[kind] for kind in KINDS)
                    and all(proxy.outages[kind] for kind in ("throttled", "internal_failure"))
                )

            # Idle triggers keep calling Kinesis, so every kind of fault comes up in time.
            wait_for(done, 240, f"every record read and every fault injected ({proxy.injected})")
            assert job.poll() is None, f"the job died under Kinesis faults:\n{tail(run.log)}"
        finally:
            code = stop(job)
        assert code == 0, f"the job exited {code} on SIGTERM:\n{tail(run.log)}"
    print(f"\ninjected {dict(proxy.injected)}; outages {dict(proxy.outages)}")
    assert_sinks_hold(run, s)
    # The source itself retried what outlasted the SDK's retries, and said so.
    retried = set(
        re.findall(r"WARN KinesisRetry: Kinesis (\w+) .*?: (\w+) \(HTTP", run.log.read_text())
    )
    assert ("GetRecords", "ProvisionedThroughputExceededException") in retried, sorted(retried)
    assert ("GetRecords", "ExpiredIteratorException") in retried, sorted(retried)
    assert "InternalFailure" in {error for _, error in retried}, sorted(retried)


@pytest.mark.long
def test_kinesis_failing_past_the_retry_bound_stops_the_job_loudly(run: Run) -> None:
    s = scripted.build(orders=20, ticks=5, seed=59)
    run.put(s.records)
    with kp.KinesisFaultProxy([kp.internal_failure(1.0, ["GetRecords"])], seed=59) as proxy:
        endpoint = proxy.endpoint
        job = run.start_job("--available-now", "--kinesis-endpoint", endpoint)
        try:
            code = job.wait(300)
        finally:
            stop(job)
    assert code != 0, "the job must not go on, or end as if done, while Kinesis keeps failing"
    log = run.log.read_text(errors="replace")
    gave_up = re.search(
        rf"Kinesis GetRecords for stream '{run.stream}' shard \S+ at {re.escape(endpoint)}"
        r" \(region [\w-]+\) failed 12 times in a row \(retried for 36\.2 s\), last with"
        r" InternalFailure \(HTTP 500\)",
        log,
    )
    assert gave_up, tail(run.log)
    assert "supervisor restarts it" in log
    # Each of the 11 retries was logged, and each attempt was the SDK's 4 calls.
    assert len(re.findall(r"WARN KinesisRetry: Kinesis GetRecords .* retrying in", log)) >= 11
    assert proxy.injected["internal_failure"] >= 12 * 4
    assert run.batches_done() == 0


# --- resharding ---------------------------------------------------------------------------


def event_key(record: bytes, n: int) -> str:
    """The event's own key as the partition key, as a CDC producer keys its records: one
    key's events then go to one shard at a time, so the order across a reshard matters."""
    try:
        event = json.loads(record)
    except ValueError:
        return f"malformed-{n}"
    if not isinstance(event, dict):
        return f"malformed-{n}"
    return str(event.get("order_id") or event.get("event_id") or f"malformed-{n}")


def put_keyed(run: Run, records: list[bytes], start: int, chunk_size: int = 10) -> None:
    client = run.kinesis()
    for offset in range(0, len(records), chunk_size):
        chunk = records[offset : offset + chunk_size]
        response = client.put_records(
            StreamName=run.stream,
            Records=[
                {"Data": data, "PartitionKey": event_key(data, start + offset + i)}
                for i, data in enumerate(chunk)
            ],
        )
        assert response["FailedRecordCount"] == 0, response
        time.sleep(0.1)  # a steady trickle, so records keep coming while the stream reshards


def wait_active(run: Run) -> None:
    client = run.kinesis()

    def active() -> bool:
        summary = client.describe_stream_summary(StreamName=run.stream)
        return summary["StreamDescriptionSummary"]["StreamStatus"] == "ACTIVE"

    wait_for(active, 60, f"stream {run.stream} to be ACTIVE")


def open_shards(run: Run) -> list[dict[str, Any]]:
    shards = run.kinesis().list_shards(StreamName=run.stream)["Shards"]
    live = [s for s in shards if "EndingSequenceNumber" not in s["SequenceNumberRange"]]
    return sorted(live, key=lambda s: int(s["HashKeyRange"]["StartingHashKey"]))


def raw_reads(run: Run) -> list[tuple[int, dict[str, Any]]]:
    """(batch id, row) of every row of the raw JSON copy (its folders name the batch)."""
    s3, out = run.s3(), []
    for table in ("hudi_orders", "stock_ticks"):
        pages = s3.get_paginator("list_objects_v2").paginate(
            Bucket=run.bucket, Prefix=f"{run.prefix}/raw/{table}/"
        )
        for page in pages:
            for obj in page.get("Contents", []):
                found = re.search(r"/batch_id=(\d+)/", obj["Key"])
                if found and obj["Key"].endswith(".json"):
                    body = s3.get_object(Bucket=run.bucket, Key=obj["Key"])["Body"].read()
                    out += [(int(found[1]), json.loads(x)) for x in body.decode().splitlines()]
    return out


def assert_parents_read_before_children(run: Run) -> int:
    """Per key, every record read from a parent shard came in an earlier batch than any read
    from its child. Returns how many keys had records on both sides of a reshard."""
    shards = run.kinesis().list_shards(StreamName=run.stream)["Shards"]
    parents = {
        s["ShardId"]: [p for p in (s.get("ParentShardId"), s.get("AdjacentParentShardId")) if p]
        for s in shards
    }
    batches: dict[tuple[str, str], list[int]] = defaultdict(list)  # (key, shard) -> batch ids
    for batch_id, row in raw_reads(run):
        key = row.get("order_id") or row["event_id"]
        batches[(key, row["_ingest_shard"])].append(batch_id)
    crossing, wrong = set(), []
    for (key, shard), child_batches in batches.items():
        for parent in parents.get(shard, []):
            parent_batches = batches.get((key, parent))
            if parent_batches:
                crossing.add(key)
                if max(parent_batches) >= min(child_batches):
                    wrong.append((key, parent, max(parent_batches), shard, min(child_batches)))
    assert wrong == [], f"read from a child before its parent was done: {wrong[:5]}"
    return len(crossing)


@pytest.mark.long
def test_split_and_merge_under_load_keep_every_record_once_and_in_key_order(run: Run) -> None:
    s = scripted.build(orders=240, ticks=40, seed=61)
    n = len(s.records)
    cuts = [0, n // 3, n // 2, 2 * n // 3, n]
    parts = [s.records[a:b] for a, b in pairwise(cuts)]
    put_keyed(run, parts[0], cuts[0])
    job = run.start_job("--trigger-seconds", "1", "--max-records-per-shard", "100")
    try:
        wait_for(lambda: run.batches_done() >= 1 or job.poll() is not None, 300, "a batch")
        client = run.kinesis()

        # A split while records keep arriving: the parent's last records come just before.
        putter = threading.Thread(target=put_keyed, args=(run, parts[1], cuts[1]))
        putter.start()
        time.sleep(0.5)
        first = open_shards(run)[0]
        low, high = (int(first["HashKeyRange"][k]) for k in ("StartingHashKey", "EndingHashKey"))
        client.split_shard(
            StreamName=run.stream,
            ShardToSplit=first["ShardId"],
            NewStartingHashKey=str((low + high) // 2),
        )
        wait_active(run)
        putter.join()
        put_keyed(run, parts[2], cuts[2])
        read = cuts[3]
        wait_for(lambda: run.records_done() >= read or job.poll() is not None, 180, "the split")
        assert job.poll() is None, tail(run.log)

        # A merge after a quiet spell: the parents' last records are seconds old by then.
        time.sleep(3)
        live = open_shards(run)
        pair = next(
            (a, b)
            for a, b in pairwise(live)
            if int(a["HashKeyRange"]["EndingHashKey"]) + 1
            == int(b["HashKeyRange"]["StartingHashKey"])
            and a.get("ParentShardId")  # a child of the split, so keys cross two reshards
        )
        client.merge_shards(
            StreamName=run.stream,
            ShardToMerge=pair[0]["ShardId"],
            AdjacentShardToMerge=pair[1]["ShardId"],
        )
        wait_active(run)
        put_keyed(run, parts[3], cuts[3])
        wait_for(lambda: run.records_done() >= n or job.poll() is not None, 180, "the merge")
        assert job.poll() is None, tail(run.log)
    finally:
        code = stop(job)
    assert code == 0, f"the job exited {code} on SIGTERM:\n{tail(run.log)}"
    run.run_job("--available-now", "--final-compaction", "--max-records-per-shard", "500")
    assert_sinks_hold(run, s)
    shards = run.kinesis().list_shards(StreamName=run.stream)["Shards"]
    assert len(shards) == 5, shards  # 2, one split into 2, two of them merged into 1
    crossing = assert_parents_read_before_children(run)
    assert crossing > 20, f"only {crossing} keys had records on both sides of a reshard"
