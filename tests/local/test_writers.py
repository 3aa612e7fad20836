"""Two writers of one table (marker `local`): a backfill from the raw copy while the
stream job runs and keeps writing newer and late events of the same keys (#66).

Both write through the same precombine rules under the lock they share (ZooKeeper,
`--lock-url`), each Hudi write in its table's turn: afterwards every key holds its newest
event in the Copy-on-Write table, the Merge-on-Read table after compaction and the live
view, once each, and the raw copy holds every event sent, once.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import time

import pytest

from lakehouse.local.job_launcher import job_command, job_env
from tests.support.pipeline import Run, tail, wait_for

pytestmark = pytest.mark.local

KEYS = 120


def order(n: int, hour: int, status: str) -> bytes:
    return json.dumps(
        {
            "event_type": "orders",
            "op": "u",
            "order_id": f"o-{n:03d}",
            "customer_id": f"c-{n % 7}",
            "amount": float(n + hour),
            "status": status,
            "order_ts": f"2026-11-20T{hour:02d}:{n // 60:02d}:{n % 60:02d}.000Z",
        }
    ).encode()


def current(run: Run, sql_from: str) -> dict[str, tuple]:
    rows = run.query(f"SELECT order_id, status, amount {sql_from}", catalog="hive")
    return {r[0]: (r[1], r[2]) for r in rows}


def test_a_backfill_beside_the_running_job_loses_and_duplicates_nothing(run: Run) -> None:
    assert run.settings.lock_url, "the local stack names its ZooKeeper (LOCK_URL)"
    created = [order(n, 10, "created") for n in range(KEYS)]
    run.put(created)
    job = run.start_job("--trigger-seconds", "2", "--max-records-per-shard", "40")
    sent = list(created)
    try:
        wait_for(run.caught_up, 420, lambda: f"the first wave; log:\n{tail(run.log)}")
        backfill = subprocess.Popen(
            job_command(run.job_args("--event-type", "orders"), module="lakehouse_job.backfill"),
            env=job_env(run.settings),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        # While the backfill rewrites the first wave, the stream brings newer events of
        # every key (paid, then shipped for a third) and late ones (older event times)
        # that must lose whichever writer's commit comes last.
        waves = [
            [order(n, 11, "paid") for n in range(0, KEYS, 2)],
            [order(n, 11, "paid") for n in range(1, KEYS, 2)],
            [order(n, 9, "late") for n in range(0, KEYS, 3)],
            [order(n, 12, "shipped") for n in range(0, KEYS, 3)],
            [order(n, 8, "late") for n in range(1, KEYS, 3)],
        ]
        for wave in waves:
            run.put(wave, start=len(sent))
            sent.extend(wave)
            time.sleep(3)
        out, _ = backfill.communicate(timeout=600)
        assert backfill.returncode == 0, out[-3000:]
        done = re.search(r"backfill done: (\d+) records of orders", out)
        assert done and int(done[1]) >= KEYS, out[-3000:]  # the first wave at least
        assert job.poll() is None, f"the job stopped beside the backfill:\n{tail(run.log)}"
        wait_for(run.caught_up, 420, lambda: f"the later waves; log:\n{tail(run.log)}")
    finally:
        os.killpg(job.pid, signal.SIGTERM)
        code = job.wait(180)
    assert code == 0, tail(run.log)
    # A run that only compacts what the stream job left, so the read-optimized view shows
    # every commit.
    run.run_job("--available-now", "--final-compaction")

    newest: dict[str, tuple[str, tuple[str, float]]] = {}
    for data in sent:
        event = json.loads(data)
        key, ts = event["order_id"], event["order_ts"]
        if key not in newest or ts > newest[key][0]:
            newest[key] = (ts, (event["status"], event["amount"]))
    expected = {key: value for key, (_, value) in newest.items()}
    assert sum(status == "shipped" for status, _ in expected.values()) == len(range(0, KEYS, 3))

    db = run.database
    for table in ("hudi_orders_cow", "hudi_orders_mor_ro"):
        counts = run.query(f"SELECT count(*), count(DISTINCT order_id) FROM hudi.{db}.{table}")
        assert counts == [[KEYS, KEYS]], f"{table}: one row per key, {counts}"
        assert current(run, f"FROM hudi.{db}.{table}") == expected, table
    assert current(run, "FROM orders") == expected, "live view"
    raw = run.raw_json_lines("hudi_orders")
    assert len(raw) == len(sent), "the raw copy: every event once, none from the backfill"
