"""Change data capture end to end: a transactional workload on a real PostgreSQL, the
Debezium service, Kinesis (one stream per table), the job, Trino. The oracle is the
database itself: every captured table equals its live view, column by column.
"""

from __future__ import annotations

import io
import os
import subprocess
from collections import Counter

import pytest

from lakehouse import cdc
from lakehouse.cdc_workload import Workload, locust_command
from lakehouse.core.clients import trino_connection
from tests.support.cdc import (
    assert_lake_equals_database,
    cdc_job_args,
    cdc_part,
    current_lsn,
    delivered,
    delivered_after,
    run_job_on_every_stream,
)
from tests.support.pipeline import Run, wait_for

pytestmark = pytest.mark.local

TABLES = ("customers", "orders")


def test_postgres_changes_reach_the_lake_column_by_column(run: Run) -> None:
    with cdc_part(run.settings, run.log.parent, debezium=False) as part:
        # Rows that exist before capture starts come from Debezium's snapshot (op r).
        with cdc.connect(part.settings) as conn:
            before = Workload(conn)
            for _ in range(40):
                before.step()
            snapshot = Counter(
                {t: conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in TABLES}
            )
        part.start_debezium()
        with cdc.connect(part.settings) as conn:
            workload = Workload(conn, before.rng)
            workload.customers, workload.orders = before.customers, before.orders
            for _ in range(300):
                workload.step()
            # The snapshot reads each row once, then every committed change is streamed.
            changes = snapshot + workload.changes
        # Locust users, as `lakehouse cdc-load` starts them, make more transactions.
        env = {**os.environ, **part.settings.service_env()}
        locust = subprocess.run(
            locust_command(users=2, transactions_per_sec=5, run_time="5s"),
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert locust.returncode == 0, locust.stdout[-3000:] + locust.stderr[-3000:]
        assert "SQL" in locust.stdout + locust.stderr, "Locust reported no transaction"
        with cdc.connect(part.settings) as conn:
            marker = current_lsn(conn)
            Workload(conn).step()  # a change after the marker: delivered last
        wait_for(
            lambda: delivered(part, changes) and delivered_after(part, marker),
            180,
            f"Debezium to deliver {dict(changes)} and Locust's transactions",
        )

        # The job starts on the orders stream alone; then the customers stream is added on
        # the same checkpoint: read from its trim horizon, and orders not read again.
        args = cdc_job_args(run, part)
        args[1] = next(stream for stream in part.streams() if stream.endswith(".orders"))
        run.run_job("--available-now", *args)
        orders_raw = len(run.raw_json_lines("cdc_orders"))
        assert orders_raw >= changes["orders"], "every orders change event in the raw copy"
        assert not run.raw_json_lines("cdc_customers"), "a stream the job was not given"
        run_job_on_every_stream(run, part)
        assert len(run.raw_json_lines("cdc_orders")) == orders_raw, "orders were read again"

        assert_lake_equals_database(run, part)
        tables = {row[0] for row in run.query("SHOW TABLES")}
        assert "quarantine" not in tables, run.query("SELECT reason FROM quarantine LIMIT 5")
        ops = dict(run.query("SELECT _op, count(*) FROM cdc_orders_cow GROUP BY _op"))
        assert ops.get("d", 0) > 0, f"deletes kept as tombstones in CoW: {ops}"
        raw = run.raw_json_lines("cdc_orders")
        assert len(raw) >= changes["orders"], "the raw copy holds every change event"

        # The oracle can fail: a change the job has not read yet is a difference.
        with cdc.connect(part.settings) as conn:
            order = conn.execute("SELECT min(order_id) FROM orders").fetchone()[0]
            conn.execute("UPDATE orders SET status = 'lost' WHERE order_id = %s", (order,))
        cursor = trino_connection(run.settings.endpoints, "hive", run.database).cursor()
        report = io.StringIO()
        assert not cdc.verify(
            part.settings,
            cursor,
            run.database,
            part.tables(),
            lambda line: report.write(line + "\n"),
        )
        assert f"key {order}: status is 'lost' in PostgreSQL" in report.getvalue()
