"""End to end through the real job: Kinesis -> Spark -> Hudi on S3 -> metastore -> Trino.

The expected state comes from tests/support/scenario.py, computed without the job.
"""

from __future__ import annotations

import json
import os
import signal

import pytest

from tests.support import scenario as scripted
from tests.support.checks import assert_sinks_hold
from tests.support.pipeline import Run, wait_for

pytestmark = pytest.mark.local


def test_scripted_stream_reaches_every_sink_exactly(run: Run) -> None:
    s = scripted.build()
    run.put(s.records)
    run.run_job("--available-now", "--final-compaction", "--max-records-per-shard", "300")
    assert_sinks_hold(run, s)
    reasons = {r[0] for r in run.query("SELECT reason FROM quarantine")}
    for expected in (
        "not JSON",
        "unknown event_type",
        "missing record key",
        "missing event time",
        "invalid timestamp",
        "wrong type",
        "invalid op",
    ):
        assert any(expected in reason for reason in reasons), (expected, reasons)


def test_kill_9_mid_stream_then_restart_loses_and_duplicates_nothing(run: Run) -> None:
    s = scripted.build(orders=300, ticks=60, seed=11)
    half = len(s.records) // 2
    run.put(s.records[:half])
    job = run.start_job("--trigger-seconds", "1", "--max-records-per-shard", "60")
    wait_for(lambda: run.batches_done() >= 2, 300, "two committed micro-batches")
    run.put(s.records[half:], start=half)
    os.killpg(job.pid, signal.SIGKILL)  # driver and JVM at once, mid-stream
    job.wait(30)
    run.run_job("--available-now", "--final-compaction", "--max-records-per-shard", "500")
    assert_sinks_hold(run, s)
    batches = [json.loads(line) for line in run.metrics.read_text().splitlines()]
    assert sum(b["records"] for b in batches) >= len(s.records)  # replayed, not lost
