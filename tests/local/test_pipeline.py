"""End to end through the real job: Kinesis -> Spark -> Hudi on S3 -> metastore -> Trino.

The expected state comes from tests/support/scenario.py, computed without the job. A
job killed mid-stream and restarted: tests/local/test_faults.py.
"""

from __future__ import annotations

import json
from collections import Counter

import pytest

from tests.support import scenario as scripted
from tests.support.checks import assert_sinks_hold
from tests.support.pipeline import Run

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
    # Hudi's own counts of the job's writes (each batch's metrics line, "hudi"): every order
    # key inserted into CoW once, every rejected record once into the quarantine.
    inserted: Counter[str] = Counter()
    for line in run.metrics.read_text().splitlines():
        for table, reported in json.loads(line).get("hudi", {}).items():
            inserted[table] += reported.get("commit.totalInsertRecordsWritten", 0)
    malformed = set(s.malformed)
    events = [json.loads(r) for r in s.records if r not in malformed]
    order_ids = {e["order_id"] for e in events if e["event_type"] == "orders"}
    assert (inserted["hudi_orders_cow"], inserted["quarantine"]) == (
        len(order_ids),
        len(s.malformed),
    )
