"""Where the Kinesis source starts reading, across a crash (marker `faults`).

The job runs as in production (its own process group, the local stack's kinesalite or
kinesis-mock) and the sinks must hold exactly the records the starting position asks for.
"""

from __future__ import annotations

import json
import os
import signal
import time

import pytest

from tests.support import scenario as scripted
from tests.support.checks import assert_sinks_hold
from tests.support.pipeline import Run, tail, wait_for

pytestmark = pytest.mark.faults

INITIAL_OFFSET = "kinesis-initial-offset.json"


def _initial_offset(run: Run) -> dict | None:
    """The source's saved initial offset, once the query has fixed it."""
    s3 = run.s3()
    listing = s3.list_objects_v2(Bucket=run.bucket, Prefix=f"{run.prefix}/checkpoint/")
    for obj in listing.get("Contents", []):
        if obj["Key"].endswith(f"/{INITIAL_OFFSET}"):
            return json.loads(s3.get_object(Bucket=run.bucket, Key=obj["Key"])["Body"].read())
    return None


def test_a_latest_query_killed_before_any_record_reads_all_put_after_its_start(run: Run) -> None:
    before = [
        json.dumps(
            {
                "event_type": "orders",
                "op": "c",
                "order_id": f"o-before-{n}",
                "order_ts": "2026-11-20T00:00:00.000Z",
                "customer_id": "c-0",
                "amount": 1.0,
                "status": "created",
            }
        ).encode()
        for n in range(20)
    ]
    run.put(before)
    job = run.start_job("--starting-position", "LATEST", "--trigger-seconds", "1")
    try:
        wait_for(
            lambda: job.poll() is not None or _initial_offset(run) is not None,
            300,
            "the query to fix its starting position",
        )
        assert job.poll() is None, f"the job ended early:\n{tail(run.log)}"
        offset = _initial_offset(run)
        assert offset is not None
        shards = offset["shards"]
        assert shards and all("startAtTimestamp" in p for p in shards.values()), shards
        # A few triggers over idle shards (kinesalite: each read waits out its AT_TIMESTAMP
        # timeout and scans instead), with nothing to commit.
        time.sleep(8)
        assert job.poll() is None, f"the job failed on idle shards:\n{tail(run.log)}"
    finally:
        # A crash before the first record: with LATEST kept as a symbol, the restart would
        # start at a new LATEST and skip everything put meanwhile.
        os.killpg(job.pid, signal.SIGKILL)
        job.wait(30)
    # Spark may commit an empty batch (the offset's form changes, no record does).
    assert run.records_done() == 0

    s = scripted.build(orders=80, ticks=20, seed=53)
    run.put(s.records)
    run.run_job("--available-now", "--final-compaction", "--max-records-per-shard", "500")

    raw = run.raw_json_lines("hudi_orders") + run.raw_json_lines("stock_ticks")
    assert not [line for line in raw if "o-before-" in line], "read records from before the start"
    assert len(raw) == s.valid_events, (
        f"the raw copy holds {len(raw)} of the {s.valid_events} valid records put after the start"
    )
    assert_sinks_hold(run, s)
