"""The capture's list of tables changing, and a capture that lost its position (#63).

A table added to a running capture gets its existing rows (an incremental snapshot while
the other tables stream); removed, its stream stops; added back, it is snapshotted again
and the rows deleted meanwhile are deleted in the lake. A replication slot dropped behind
the service's back: the next start refuses in words naming the database, the slot and the
stored position; `lakehouse cdc reset` starts the capture over and the lake drops the rows
deleted while it was broken. The database stays the oracle (lakehouse.cdc.verify).
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from lakehouse import cdc, cdc_declare
from lakehouse.cdc_workload import Workload
from lakehouse.cli.cdc import cdc_status_lines
from lakehouse.core.clients import kinesis_client, trino_connection
from lakehouse.local import stack
from lakehouse.local.services import CDC_SERVICE_BUILDERS
from lakehouse.local.supervisor import ServiceError, ServiceStatus
from lakehouse_tables.declarations import load_tables
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

pytestmark = pytest.mark.local


def steps(workload: Workload, n: int) -> None:
    for _ in range(n):
        workload.step()


def capturing(part: CdcPart, tables: str) -> CdcPart:
    """The same part with another CDC_TABLES (the job and the oracle keep every table)."""
    env = {**part.settings.env, "CDC_TABLES": tables}
    return dataclasses.replace(part, settings=dataclasses.replace(part.settings, env=env))


def snapshots_done(part: CdcPart) -> bool:
    health = cdc.debezium_health(part.settings)
    return bool(health.get("streaming")) and health.get("snapshots_pending") == []


def caught_up(part: CdcPart, conn: object, workload: Workload) -> None:
    """Every table's incremental snapshot delivered, then a change made after it."""
    wait_for(lambda: snapshots_done(part), 180, "the incremental snapshots to complete")
    # A capture started over on a server behind the lake shifts the positions it writes.
    marker = current_lsn(conn) + cdc.capture_state(part.settings).get("lsn_shift", 0)
    workload.sign_up(workload.changes)  # customers: captured in every phase
    wait_for(lambda: delivered_after(part, marker), 180, "Debezium to deliver the last change")


def delete_orders(conn: object, workload: Workload, n: int) -> list[int]:
    gone = sorted(workload.orders)[:n]
    for order in gone:
        conn.execute("DELETE FROM orders WHERE order_id = %s", (order,))  # type: ignore[attr-defined]
        del workload.orders[order]
    return gone


def lake_orders(run: Run) -> set[int]:
    return {row[0] for row in run.query("SELECT order_id FROM cdc_orders", catalog="hive")}


def incremental_reads(part: CdcPart, stream: str) -> int:
    return sum(
        1
        for data in part.stream_data(stream)
        if json.loads(data).get("source", {}).get("snapshot") == "incremental"
    )


def test_tables_added_removed_and_added_back_then_a_lost_slot_reset(run: Run) -> None:
    with cdc_part(run.settings, run.log.parent, debezium=False) as part:
        orders_stream = f"{part.prefix}.public.orders"
        customers_only = capturing(part, "public.customers")
        with cdc.connect(part.settings) as conn:
            workload = Workload(conn)
            steps(workload, 150)  # orders has rows before it is captured
            customers_only.start_debezium()
            steps(workload, 40)
            # Its snapshot and some changes delivered: the capture has stored a position
            # (a stop before that would make the next start take an initial snapshot).
            caught_up(customers_only, conn, workload)
            assert not part.stream_exists(orders_stream)

            # Added to the capture: a restart of the service alone. Its existing rows come
            # by an incremental snapshot while customers streams and the workload goes on.
            existing = len(workload.orders)
            part.stop_debezium()
            part.start_debezium()
            steps(workload, 80)
            caught_up(part, conn, workload)
            assert incremental_reads(part, orders_stream) >= existing
            run_job_on_every_stream(run, part)
            assert_lake_equals_database(run, part)

            # Removed: its stream gets nothing more, and the service says so.
            customers_only.stop_debezium()
            customers_only.start_debezium()
            log = part.supervisor.log_file("cdc").read_text()
            assert "public.orders is no longer captured" in log
            records = part.stream_records(orders_stream)
            steps(workload, 40)
            gone_while_removed = delete_orders(conn, workload, 5)
            marker = current_lsn(conn)
            workload.sign_up(workload.changes)
            wait_for(lambda: delivered_after(part, marker), 180, "customers to stream on")
            assert part.stream_records(orders_stream) == records

            # Added back: snapshotted again, and the orders deleted meanwhile deleted.
            part.stop_debezium()
            part.start_debezium()
            steps(workload, 40)
            caught_up(part, conn, workload)
            run_job_on_every_stream(run, part)
            assert_lake_equals_database(run, part)
            assert not lake_orders(run) & set(gone_while_removed)

            # The slot dropped while the service is stopped (a restored or recreated
            # database has none either); the rows deleted meanwhile are lost to the stream.
            part.stop_debezium()
            conn.execute("SELECT pg_drop_replication_slot(%s)", (part.settings["CDC_SLOT"],))
            steps(workload, 30)
            gone_while_broken = delete_orders(conn, workload, 5)
            with pytest.raises(ServiceError) as refused:
                stack.start_cdc_service(part.settings, lambda _: None)
            message = str(refused.value)
            for named in (
                part.settings["CDC_PG_DATABASE"],
                part.settings["CDC_SLOT"],
                "lakehouse cdc reset",
            ):
                assert named in message, message
            assert "Exception" not in message and "\tat " not in message, message
            error = cdc.capture_error(part.settings)
            assert error and error["stored_position"] in message, error
            status = cdc_status_lines(part.settings, [ServiceStatus("cdc", "stopped")])
            assert status == [f"CDC capture stopped: {error['message']}"]

            # Started over: a new slot, every table snapshotted again while changes stream,
            # the rows deleted while the capture was broken deleted in the lake.
            cdc.reset(part.settings, lambda _: None)
            assert cdc.capture_error(part.settings) is None
            part.start_debezium()
            steps(workload, 40)
            caught_up(part, conn, workload)
        run_job_on_every_stream(run, part)
        assert_lake_equals_database(run, part)
        assert not lake_orders(run) & set(gone_while_broken)
        keys = run.query("SELECT count(*), count(DISTINCT order_id) FROM cdc_orders", "hive")
        assert keys[0][0] == keys[0][1], keys


LINES_DDL = """
CREATE TABLE public.order_lines (
    order_id bigint,
    line_no  integer,
    sku      text          NOT NULL,
    qty      integer       NOT NULL,
    price    numeric(10,2) NOT NULL,
    PRIMARY KEY (order_id, line_no)
);
ALTER TABLE public.order_lines REPLICA IDENTITY FULL;
"""


def test_a_table_keyed_by_two_columns_declared_from_the_catalog(run: Run, tmp_path: Path) -> None:
    with cdc_part(run.settings, run.log.parent) as part, cdc.connect(part.settings) as conn:
        workload = Workload(conn)
        steps(workload, 20)
        conn.execute(LINES_DDL)
        for order in range(1, 31):
            for line in range(1, 5):
                conn.execute(
                    "INSERT INTO order_lines VALUES (%s, %s, %s, 1, 9.99)",
                    (order, line, f"sku-{order}-{line}"),
                )
        # Its entry read from the catalog, beside the shipped ones.
        declared = cdc_declare.declare(conn, ["public.order_lines"])
        assert "record_key: [order_id, line_no]" in declared
        tables_file = tmp_path / "tables.yaml"
        shipped = cdc.CDC_TABLES_YAML.read_text()
        tables_file.write_text(shipped + "\n" + declared.removeprefix("event_types:\n"))

        # Added to the running capture: an incremental snapshot, chunked by both columns.
        caught_up(part, conn, workload)
        lines = capturing(part, "public.customers,public.orders,public.order_lines")
        part.stop_debezium()
        try:
            check_lines(run, conn, workload, lines, tables_file)
        finally:
            client = kinesis_client(run.settings.endpoints)
            with contextlib.suppress(client.exceptions.ResourceNotFoundException):
                client.delete_stream(StreamName=lines.streams()[-1], EnforceConsumerDeletion=True)


def check_lines(run: Run, conn: Any, workload: Workload, lines: CdcPart, tables_file: Path) -> None:
    """order_lines added to the capture, changed (a key changed too), read by the job."""
    tables = load_tables(tables_file)
    lines.start_debezium()
    for order in range(1, 31, 3):  # each key updated several times
        for qty in (2, 3, 4):
            conn.execute("UPDATE order_lines SET qty = %s WHERE order_id = %s", (qty, order))
    # A primary key changed: a delete of the old key and an insert of the new one.
    conn.execute("UPDATE order_lines SET line_no = line_no + 10 WHERE order_id = 2")
    conn.execute("DELETE FROM order_lines WHERE order_id = 3")
    conn.execute("INSERT INTO order_lines VALUES (3, 1, 'again', 7, 1.00)")
    steps(workload, 20)
    caught_up(lines, conn, workload)

    args = cdc_job_args(run, lines)
    args[args.index("--tables") + 1] = str(tables_file)
    run.run_job("--available-now", "--final-compaction", *args)
    report: list[str] = []
    cursor = trino_connection(run.settings.endpoints, "hive", run.database).cursor()
    ok = cdc.verify(lines.settings, cursor, run.database, tables, report.append)
    assert ok, "\n".join(report)
    # One live row per key, under Hudi's key of two fields, in both table types.
    for table in ("cdc_order_lines_cow", "cdc_order_lines_mor_ro"):
        rows = run.query(
            f"SELECT count(*), count(DISTINCT _hoodie_record_key), "
            f"count(DISTINCT format('%d/%d', order_id, line_no)), min(_hoodie_record_key) "
            f"FROM {table}"
        )
        total, keys, pairs, sample = rows[0]
        assert total == keys == pairs, rows
        assert sample.startswith("order_id:") and ",line_no:" in sample, sample
    live = run.query("SELECT line_no FROM cdc_order_lines WHERE order_id = 2", "hive")
    assert sorted(row[0] for row in live) == [11, 12, 13, 14]


def test_a_database_replaced_by_another_cluster_is_started_over(run: Run) -> None:
    """The same address answers with another cluster (a restore from a backup, a new
    instance): other rows under the same keys, fewer of them, and log positions behind
    the lake's. After `cdc reset` the lake equals the new database."""
    with cdc_part(run.settings, run.log.parent) as part:
        with cdc.connect(part.settings) as conn:
            workload = Workload(conn)
            steps(workload, 80)
            for _ in range(2):  # the old server's log runs a segment or two ahead
                conn.execute("SELECT pg_switch_wal()")
                workload.sign_up(workload.changes)
            caught_up(part, conn, workload)
        run_job_on_every_stream(run, part)
        assert_lake_equals_database(run, part)

        part.stop_debezium()
        part.supervisor.stop("postgres")
        shutil.rmtree(cdc.pg_data_dir(part.settings))
        part.supervisor.start(CDC_SERVICE_BUILDERS["postgres"](part.settings), lambda _: None)
        cdc.bootstrap(part.settings, lambda _: None)
        with cdc.connect(part.settings) as conn:
            workload = Workload(conn)
            steps(workload, 30)  # keys from 1 again, other values
            assert current_lsn(conn) < part.newest_lsn(), "the new cluster is behind the lake"
            with pytest.raises(ServiceError, match="does not exist in database") as refused:
                stack.start_cdc_service(part.settings, lambda _: None)
            assert "lakehouse cdc reset" in str(refused.value)
            # As `lakehouse down` and `up` leave a local Kinesis engine: the streams are new
            # and hold nothing of the lake's rows, which `lakehouse cdc reset` reads from
            # the lake's views instead.
            client = kinesis_client(run.settings.endpoints)
            for stream in part.streams():
                client.delete_stream(StreamName=stream, EnforceConsumerDeletion=True)
            wait_for(lambda: not any(listed(client, s) for s in part.streams()), 60, "deletes")
            cdc.reset(part.settings, lambda _: None)
            cursor = trino_connection(run.settings.endpoints, "hive", run.database).cursor()
            cdc.write_lake_keys(part.settings, cursor, run.database, part.tables(), print)
            part.start_debezium()
            steps(workload, 20)
            caught_up(part, conn, workload)
            assert cdc.capture_state(part.settings)["lsn_shift"] > 0
        # The streams are new: a new checkpoint reads them.
        args = cdc_job_args(run, part)
        args[args.index("--checkpoint") + 1] += "-after-reset"
        run.run_job("--available-now", "--final-compaction", *args)
        assert_lake_equals_database(run, part)  # same keys, the new values; the rest gone


def listed(client: Any, stream: str) -> bool:
    """The stream exists in any state (a deleted one is gone only once no longer listed)."""
    try:
        client.describe_stream_summary(StreamName=stream)
    except client.exceptions.ResourceNotFoundException:
        return False
    return True
