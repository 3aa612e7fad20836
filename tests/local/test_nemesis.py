"""A nemesis soak (marker `soak`; `make nemesis`): Locust load for
NEMESIS_SECONDS (600), while every 20-60 s the job is killed (-9, driver and JVM) or a
dependency restarted (MinIO, the metastore, Trino) or, for Kinesis, whose local engines
keep streams in memory only, paused for 20 s. Then the job catches up and every table
must equal the ledger, the raw copy must hold each acknowledged valid record once and the
quarantine each malformed one. The figures go to stdout and to NEMESIS_RESULTS (JSON).
"""

from __future__ import annotations

import io
import json
import os
import signal
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from lakehouse.core.clients import trino_connection
from lakehouse.local import stack as stack_module
from lakehouse.local.job_launcher import job_spec
from lakehouse.local.services import metastore_spec, minio_spec, trino_spec
from lakehouse.local.supervisor import ServiceSpec, Supervisor
from lakehouse_tables.declarations import load_tables
from loadgen import verify
from loadgen.ledger import classify, entry_data, read_ledger
from loadgen.options import LoadOptions
from loadgen.runner import run_load
from tests.support.nemesis import Nemesis, summary
from tests.support.pipeline import Run, wait_for

pytestmark = [pytest.mark.faults, pytest.mark.long, pytest.mark.soak]

SOAK_S = float(os.environ.get("NEMESIS_SECONDS", "600"))
EVENTS_PER_S = 100  # per Locust user: 4 users, about 400 events/s in all


def _descendants(root: int) -> set[int]:
    children: dict[int, set[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), set()).add(int(stat.parent.name))
    found, todo = set(), [root]
    while todo:
        for child in children.get(todo.pop(), set()):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def test_a_nemesis_soak_under_load_converges_to_the_ledger(
    stack: Any, run: Run, tmp_path: Path
) -> None:
    settings = stack.settings
    services = stack_module.supervisor_for(settings)
    job = Supervisor(tmp_path / "run", tmp_path / "logs")
    job.start(
        job_spec(settings, run.job_args("--trigger-seconds", "2")), progress=lambda _line: None
    )

    def kill_job() -> None:
        keepalive = job.status("job").pid
        assert keepalive is not None, "the job's keepalive is gone"
        for pid in _descendants(keepalive):
            os.kill(pid, signal.SIGKILL)

    def restart(spec: ServiceSpec) -> None:
        services.stop(spec.name)
        services.start(spec, progress=lambda _line: None)

    def pause_kinesis() -> None:
        pid = services.status("kinesis").pid
        assert pid is not None
        os.kill(pid, signal.SIGSTOP)
        try:
            time.sleep(20)  # below the producer's 30 s read timeout: acked, not unknown
        finally:
            os.kill(pid, signal.SIGCONT)

    nemesis = Nemesis(
        {
            "kill -9 job": (5, kill_job),
            "restart minio": (1.5, lambda: restart(minio_spec(settings))),
            "restart metastore": (1.5, lambda: restart(metastore_spec(settings))),
            "restart trino": (0.5, lambda: restart(trino_spec(settings))),
            "pause kinesis 20 s": (1, pause_kinesis),
        },
        batches=run.batches_done,
        seed=int(os.environ.get("NEMESIS_SEED", "11")),
    )
    ledger = tmp_path / "ledger"
    load_rc: list[int] = []
    load = threading.Thread(
        target=lambda: load_rc.append(
            run_load(
                LoadOptions(
                    stream_name=run.stream,
                    kinesis_endpoint=settings.kinesis_endpoint,
                    region=settings["AWS_REGION"],
                    workers=2,
                    users=4,
                    run_time=f"{SOAK_S:.0f}s",
                    stop_timeout=30,
                    ledger_dir=str(ledger),
                    event_model="mix",
                    seed="99",
                    events_per_sec=EVENTS_PER_S,
                    batch_size=50,
                    key_cardinality="2000",
                    duplicate_rate=0.02,
                    out_of_order_rate=0.05,
                    late_rate=0.05,
                    malformed_rate=0.01,
                ),
                env={"AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test"},
                log_dir=tmp_path / "load-logs",
                timeout=SOAK_S + 300,
            )
        )
    )
    try:
        wait_for(lambda: run.batches_done() >= 1, 300, "a first micro-batch")
        load.start()
        injected = nemesis.run(SOAK_S)
        load.join(SOAK_S + 400)
        nemesis.settle(injected, timeout_s=300)
    finally:
        job.stop("job", timeout_s=180)
    # Locust exits 1 when any call failed, as some do while a dependency is down; the
    # ledger, which records every event's outcome, is what the check below relies on.
    assert load_rc in ([0], [1]), f"the load generator exited {load_rc}"
    assert len(list(ledger.glob("*.summary.json"))) == 2, "a worker wrote no ledger summary"
    caught_up = time.monotonic()
    run.run_job("--available-now", "--final-compaction", "--max-records-per-shard", "5000")
    catch_up_s = round(time.monotonic() - caught_up, 1)

    figures = {**summary(injected), "catch_up_s": catch_up_s, "load_exit": load_rc[0]}
    figures.update(_check(run, ledger))
    print(json.dumps(figures, indent=2))
    if os.environ.get("NEMESIS_RESULTS"):
        Path(os.environ["NEMESIS_RESULTS"]).write_text(json.dumps(figures, indent=2) + "\n")
    assert figures["faults"] >= SOAK_S // 60
    assert figures["recovered"] == figures["faults"], figures["log"]
    assert figures["lost"] == 0 and figures["duplicated"] == 0, figures["tables"]
    assert figures["raw_missing"] == figures["raw_duplicated"] == figures["raw_unexplained"] == 0
    maybe = figures["malformed_unacked_or_ambiguous"]
    assert 0 <= figures["quarantine"] - figures["malformed_acked"] <= maybe


def _check(run: Run, ledger: Path) -> dict[str, Any]:
    """The sinks against the ledger: lost (missing or stale rows) and duplicated (a key
    twice, or a deleted key still visible) per table, the raw copy, the quarantine."""
    tables = load_tables()
    conn = trino_connection(run.settings.endpoints, schema=run.database)
    diffs = []
    for suffix in ("_cow", "_mor_ro"):
        diffs += verify.verify_tables(
            tables,
            str(ledger),
            conn,
            "hudi",
            run.database,
            table_suffix=suffix,
            where="NOT _is_deleted",
            out=io.StringIO(),
        )
    entries = list(read_ledger(str(ledger)))
    acked: dict[str, set[tuple[str, str]]] = {et: set() for et in tables}
    maybe_extra: Counter[str] = Counter()  # unacked or ambiguous: may be on the stream
    malformed = malformed_maybe = 0
    for e in entries:
        _kind, event = classify(entry_data(e), tables)
        if event is None:
            malformed += bool(e.get("acked"))
            malformed_maybe += not e.get("acked") or bool(e.get("ambiguous"))
            continue
        if e.get("acked"):
            acked[event["event_type"]].add((e["shard_id"], e["sequence_number"]))
        if not e.get("acked") or e.get("ambiguous"):
            maybe_extra[event["event_type"]] += 1
    raw_missing = raw_duplicated = raw_unexplained = 0
    for event_type, spec in tables.items():
        lines = run.raw_json_lines(spec.table)
        positions = {(r["_ingest_shard"], r["_ingest_seq"]) for r in map(json.loads, lines)}
        raw_duplicated += len(lines) - len(positions)
        raw_missing += len(acked[event_type] - positions)
        extra = len(positions - acked[event_type])
        raw_unexplained += max(0, extra - maybe_extra[event_type])
    quarantine = run.query("SELECT count(*) FROM quarantine")[0][0]
    return {
        "events_acked": sum(bool(e.get("acked")) for e in entries),
        "events_unacked_or_ambiguous": sum(maybe_extra.values()),
        "malformed_acked": malformed,
        "malformed_unacked_or_ambiguous": malformed_maybe,
        "lost": sum(d.missing + d.stale for d in diffs),
        "duplicated": sum(d.duplicate_keys + d.extra for d in diffs),
        "raw_missing": raw_missing,
        "raw_duplicated": raw_duplicated,
        "raw_unexplained": raw_unexplained,
        "quarantine": quarantine,
        "tables": {
            d.table: {"expected": d.expected, "matched": d.matched, "ok": d.ok} for d in diffs
        },
    }
