"""Records sent the way the Kinesis Producer Library sends them (marker `local`; the crash
test `faults`): the load generator aggregates user records (--kpl-aggregate), plain
records and a corrupt aggregate share the stream, and every user record lands where the
ledger says, the corrupt aggregate in the quarantine with its reason.
"""

from __future__ import annotations

import base64
import io
import json
from collections import Counter
from dataclasses import replace
from decimal import Decimal
from pathlib import Path

import pytest

from lakehouse.core.clients import trino_connection
from lakehouse.local import demo
from lakehouse.local.job_launcher import job_spec
from lakehouse.local.supervisor import Supervisor
from lakehouse_job.crash_points import POINTS_ENV, STATE_ENV, fired_points
from lakehouse_tables.declarations import load_tables
from loadgen import verify
from loadgen.ledger import expected_state, read_ledger
from loadgen.options import LoadOptions
from loadgen.runner import run_load
from tests.support.pipeline import Run, wait_for
from tests.support.ports import free_port

pytestmark = pytest.mark.local

PLAIN = [
    {"event_type": "orders", "order_id": f"plain-{n}", "status": "created",
     "order_ts": f"2026-11-20T10:00:{n:02d}Z"}
    for n in range(5)
]  # fmt: skip


def load_aggregated(run: Run, tmp_path: Path, seconds: int = 6) -> Path:
    """The load generator for a few seconds, 10 user records per Kinesis record."""
    ledger = tmp_path / "ledger"
    opts = LoadOptions(
        stream_name=run.stream,
        kinesis_endpoint=run.settings.kinesis_endpoint,
        region=run.settings["AWS_REGION"],
        workers=1,
        users=2,
        run_time=f"{seconds}s",
        stop_timeout=20,
        master_port=free_port(),
        ledger_dir=str(ledger),
        event_model="orders",
        seed="2121",
        events_per_sec=60,
        batch_size=40,
        key_cardinality="150",
        duplicate_rate=0.05,
        late_rate=0.05,
        malformed_rate=0.05,
        kpl_aggregate=10,
    )
    env = {"AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test"}
    rc = run_load(opts, env=env, log_dir=tmp_path / "logs", timeout=180)
    logs = {p.name: p.read_text()[-3000:] for p in (tmp_path / "logs").glob("*.log")}
    assert rc == 0, logs
    return ledger


def check_against_ledger(run: Run, ledger: Path) -> None:
    conn = trino_connection(run.settings.endpoints, schema=run.database)
    for suffix in ("_cow", "_mor_ro"):
        out = io.StringIO()
        (diff,) = verify.verify_tables(
            load_tables(),
            str(ledger),
            conn,
            "hudi",
            run.database,
            event_types=["orders"],
            table_suffix=suffix,
            where="NOT _is_deleted",
            out=out,
        )
        assert diff.ok and diff.matched > 0, out.getvalue()
    # `make demo`'s nested query (UNNEST of each order's items) adds up what was sent.
    units: Counter[str] = Counter()
    revenue: Counter[str] = Counter()
    for row in expected_state(read_ledger(str(ledger)), load_tables()).rows["orders"].values():
        for item in row["items"] or []:
            units[item["sku"]] += item["qty"]
            revenue[item["sku"]] += item["qty"] * Decimal(item["price"])
    top = sorted(revenue, key=lambda sku: (-revenue[sku], sku))[:5]
    expected = [[sku, units[sku], revenue[sku]] for sku in top]
    assert top and run.query(demo.TOP_ITEMS_SQL) == expected


def corrupt_aggregate() -> bytes:
    """A KPL aggregate whose body no longer matches its MD5 (one byte flipped)."""
    from loadgen.kpl import aggregate
    from loadgen.models import Record

    (agg,) = aggregate(
        [Record(b'{"event_type":"orders"}', "k", "orders", "valid", 0)], 10, lambda _k: None
    )
    data = bytearray(agg.data)
    data[8] ^= 0x01
    return bytes(data)


def test_kpl_aggregates_plain_records_and_a_corrupt_aggregate_on_one_stream(
    run: Run, tmp_path: Path
) -> None:
    run.put([json.dumps(e).encode() for e in PLAIN[:3]], start=0)
    ledger = load_aggregated(run, tmp_path)
    broken = corrupt_aggregate()
    run.put([broken, *(json.dumps(e).encode() for e in PLAIN[3:])], start=100)

    entries = list(read_ledger(str(ledger)))
    assert entries and all(e["acked"] for e in entries)
    per_record = Counter((e["shard_id"], e["sequence_number"]) for e in entries)
    assert max(per_record.values()) > 1, "the load generator sent no aggregate"
    assert all(e["sub_sequence"] is not None for e in entries)

    # One batch: aggregates across batch boundaries (a batch ends after an aggregate, the
    # next starts after it) are the kill test's, below, at 3 Kinesis records a batch.
    run.run_job("--available-now", "--final-compaction")
    check_against_ledger(run, ledger)
    plain = run.query("SELECT order_id FROM hudi_orders_cow WHERE order_id LIKE 'plain-%'")
    assert sorted(r[0] for r in plain) == [f"plain-{n}" for n in range(5)]

    state = expected_state(entries, load_tables())
    quarantined = run.query("SELECT raw_payload, reason, sequence_number FROM quarantine")
    corrupt = [q for q in quarantined if q[1].startswith("corrupt KPL aggregate")]
    assert len(corrupt) == 1, quarantined
    assert corrupt[0][1] == "corrupt KPL aggregate: MD5 mismatch (changed or truncated body) " \
        "(raw_payload is base64)"  # fmt: skip
    assert base64.b64decode(corrupt[0][0]) == broken
    # Every malformed user record, each under its own place (sequence number/index).
    assert len(quarantined) == 1 + sum(state.malformed.values())
    assert len({q[2] for q in quarantined}) == len(quarantined)
    raw = run.raw_json_lines("hudi_orders")
    assert len(raw) == state.counts["valid"] + len(PLAIN)  # each valid user record once


@pytest.mark.faults
def test_a_job_killed_in_the_middle_of_aggregates_loses_and_repeats_nothing(
    run: Run, tmp_path: Path
) -> None:
    """Batches of 3 Kinesis records (30 user records) per shard: the kill before Spark's
    commit of a batch holding aggregates is replayed whole on restart."""
    ledger = load_aggregated(run, tmp_path, seconds=5)
    state = tmp_path / "crash-state"
    points = ("after:hudi_orders_cow", "before-commit")
    job_args = run.job_args("--trigger-seconds", "1", "--max-records-per-shard", "3")
    spec = job_spec(run.settings, job_args, keepalive_args=("--max-backoff", "2"))
    spec = replace(spec, env={**spec.env, POINTS_ENV: ",".join(points), STATE_ENV: str(state)})
    supervisor = Supervisor(tmp_path / "run", tmp_path / "logs")
    supervisor.start(spec, progress=lambda _line: None)
    log = supervisor.log_file("job")

    def restarts() -> int:
        return log.read_text(errors="replace").count("restart ")

    try:
        wait_for(lambda: fired_points(state) == set(points), 600, "both crash points")
        # The supervisor notes a restart once it sees the killed job gone: stopping it
        # the moment the last point fires could beat that note (a red run, 2026-11-25).
        wait_for(lambda: restarts() >= len(points), 120, "a restart after each crash")
    finally:
        supervisor.stop("job", timeout_s=120)
    run.run_job("--available-now", "--final-compaction", "--max-records-per-shard", "500")
    check_against_ledger(run, ledger)
    entries = list(read_ledger(str(ledger)))
    expected = expected_state(entries, load_tables())
    raw = run.raw_json_lines("hudi_orders")
    positions = Counter(
        (line["_ingest_shard"], line["_ingest_seq"], line["_ingest_subseq"])
        for line in map(json.loads, raw)
    )
    # Replays rewrite their batch's own raw folder: each user record once, none missing.
    assert len(positions) == expected.counts["valid"]
    assert max(positions.values()) == 1, positions.most_common(3)
