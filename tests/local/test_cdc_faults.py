"""Change data capture through faults (marker `faults`): the Debezium service killed in the
middle of its initial snapshot, stopped and killed (-9) while the workload goes on, started
once without its stored offsets, the job killed (-9) mid-stream. Debezium resumes from its
stored offsets (or, without them, from its replication slot) and redelivers what Kinesis
acknowledged after its last offset commit; the job's ordering by LSN absorbs the
duplicates; a snapshot taken again deletes the rows a cut one delivered and it no longer
finds. The database stays the oracle.
"""

from __future__ import annotations

import json
import os
import signal

import pytest

from lakehouse import cdc
from lakehouse.cdc_workload import Workload
from lakehouse.local.supervisor import Supervisor
from tests.support.cdc import (
    CdcPart,
    assert_lake_equals_database,
    cdc_job_args,
    cdc_part,
    current_lsn,
    delivered_after,
    run_job_on_every_stream,
)
from tests.support.pipeline import Run, wait_for

pytestmark = pytest.mark.faults


def kill_9(supervisor: Supervisor, name: str) -> None:
    status = supervisor.status(name)
    assert status.state == "running" and status.pid, status
    os.killpg(status.pid, signal.SIGKILL)
    wait_for(lambda: supervisor.status(name).state == "dead", 30, f"{name} to die")


def steps(workload: Workload, n: int) -> None:
    for _ in range(n):
        workload.step()


def delivered_orders(part: CdcPart) -> set[int]:
    found = set()
    for data in part.stream_data(f"{part.prefix}.public.orders"):
        event = json.loads(data)
        found.add(event["after"]["order_id"])
    return found


def test_debezium_stopped_and_killed_mid_load_then_the_job_killed(run: Run) -> None:
    with (
        cdc_part(run.settings, run.log.parent, debezium=False) as part,
        cdc.connect(part.settings) as conn,
    ):
        workload = Workload(conn)
        steps(workload, 150)
        # Killed in the middle of its initial snapshot, after 40 rows reached Kinesis. Rows
        # it delivered are deleted before the next start, whose new snapshot has no delete
        # for them: the service deletes them (lakehouse.cdc.SnapshotKeys).
        part.start_debezium_halting_in_snapshot(batch=2, batch_size=20)
        gone = sorted(delivered_orders(part) & set(workload.orders))[:3]
        assert len(gone) == 3, f"the cut snapshot delivered orders {delivered_orders(part)}"
        with conn.transaction():
            for order in gone:
                conn.execute("DELETE FROM orders WHERE order_id = %s", (order,))
                del workload.orders[order]
        workload.changes["orders"] += len(gone)
        part.start_debezium()
        steps(workload, 120)
        part.stop_debezium()  # SIGTERM: the batch in flight finishes, offsets flushed
        steps(workload, 60)  # written while nothing captures: the slot keeps them
        part.start_debezium()
        steps(workload, 30)
        midway = current_lsn(conn)
        steps(workload, 30)
        # Mid-stream, with changes delivered: the stored offsets may trail what Kinesis holds.
        wait_for(lambda: delivered_after(part, midway), 180, "Debezium to deliver some")
        kill_9(part.supervisor, "cdc")
        steps(workload, 60)
        part.start_debezium()
        steps(workload, 59)
        marker = current_lsn(conn)
        steps(workload, 1)
        wait_for(lambda: delivered_after(part, marker), 180, "Debezium to catch up")
        # Changes delivered but no offset stored (a crash before the first offset commit):
        # the next start streams from the slot. A new snapshot would carry no delete, and
        # the rows deleted meanwhile would stay in the lake.
        kill_9(part.supervisor, "cdc")
        cdc.offsets_file(part.settings).unlink()
        steps(workload, 20)
        while workload.step() != "cancel_order":
            pass
        part.start_debezium()
        marker = current_lsn(conn)
        steps(workload, 1)
        wait_for(lambda: delivered_after(part, marker), 180, "Debezium to catch up again")

        job = run.start_job(
            *cdc_job_args(run, part),
            *("--trigger-seconds", "1", "--max-records-per-shard", "40"),
        )
        wait_for(lambda: run.batches_done() >= 2, 300, "two committed micro-batches")
        os.killpg(job.pid, signal.SIGKILL)
        job.wait(30)
        run_job_on_every_stream(run, part)

        assert_lake_equals_database(run, part)
        assert_redelivery_was_absorbed(run, part)


def assert_redelivery_was_absorbed(run: Run, part: CdcPart) -> None:
    """However many times a change reached the stream, one row per key is live."""
    keys = run.query("SELECT count(*), count(DISTINCT order_id) FROM cdc_orders_cow")
    assert keys[0][0] == keys[0][1], keys
