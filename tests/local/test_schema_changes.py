"""A tables file changed between two runs of the job (marker `local`; the crash test
`faults` and `long`).

A column declared in the middle of an entry reaches every table of it (CoW, MoR after
compaction, the live view, the raw JSON table) with old rows reading NULL; widened types
(long to double, a decimal's digits up) are read in the new type, old rows included; a
change the existing tables cannot take stops the job before it writes anything.
"""

from __future__ import annotations

import json
import subprocess
from dataclasses import replace
from decimal import Decimal
from pathlib import Path

import pytest

from lakehouse import cli
from lakehouse.local.job_launcher import job_command, job_env, job_spec
from lakehouse.local.supervisor import Supervisor
from lakehouse_job.crash_points import POINTS_ENV, STATE_ENV, fired_points
from lakehouse_job.startup import EXIT_REFUSED_CONFIG
from lakehouse_tables.declarations import TABLES_YAML
from tests.support.pipeline import Run, storage_state, tail, wait_for

pytestmark = pytest.mark.local

ORDER_FIELDS = "      amount: double\n"
# The test's orders carry a quantity and a unit price, widened by the evolution (not
# `price`: an item's price is decimal(10,2), and same-named decimals must agree).
NARROW = ORDER_FIELDS + "      qty: long\n      unit_price: decimal(10,2)\n"
WIDE = ORDER_FIELDS + "      qty: double\n      unit_price: decimal(12,2)\n"
BASE_TABLES = TABLES_YAML.read_text().replace(ORDER_FIELDS, NARROW, 1)
EVOLVED_TABLES = TABLES_YAML.read_text().replace(ORDER_FIELDS, WIDE + "      coupon: string\n", 1)


def order(n: int, second: int, op: str = "u", **fields: object) -> bytes:
    event = {
        "event_type": "orders",
        "op": op,
        "order_id": f"o-{n:03d}",
        "customer_id": f"c-{n % 7}",
        "amount": float(n),
        "status": "created",
        "qty": n,
        "unit_price": f"{n}.25",
        "order_ts": f"2026-11-20T10:{second // 60:02d}:{second % 60:02d}.000Z",
    }
    event.update(fields)
    return json.dumps(event).encode()


def typed_rows(run: Run, sql_from: str) -> dict[str, tuple]:
    """qty and unit_price as Trino returns them (a float is a double, a Decimal a decimal)."""
    rows = run.query(f"SELECT order_id, qty, unit_price {sql_from}", catalog="hive")
    return {r[0]: (type(r[1]).__name__, r[1], r[2]) for r in rows}


def column_types(run: Run, table: str, catalog: str = "hudi") -> dict[str, str]:
    return {r[0]: r[1] for r in run.query(f"SHOW COLUMNS FROM {table}", catalog=catalog)}


def live_rows(run: Run, sql_from: str) -> dict[str, tuple]:
    rows = run.query(f"SELECT order_id, status, amount, coupon {sql_from}", catalog="hive")
    return {r[0]: tuple(r[1:]) for r in rows}


def test_a_column_added_mid_stream_and_changes_refused_before_writing(
    run: Run, tmp_path: Path
) -> None:
    tables = tmp_path / "tables.yaml"
    tables.write_text(BASE_TABLES)
    trino = f"http://127.0.0.1:{run.settings.port('TRINO_PORT')}"
    args = ("--tables", str(tables), "--trino-url", trino)
    # o-010 and o-011 carry a field nobody has declared yet: kept in the raw copy only.
    # o-050's qty is not a whole number, which a long cannot hold: quarantined.
    run.put(
        [order(n, n, **({"coupon": "EARLY"} if n in (10, 11) else {})) for n in range(30)]
        + [order(50, 50, qty=2.5)]
    )
    run.run_job("--available-now", *args)

    # Refused: a dropped column, a narrowed type, a decimal with fewer integer digits and
    # another record key, all at once.
    refused = tmp_path / "refused.yaml"
    text = BASE_TABLES.replace("      status: string\n", "", 1)
    text = text.replace("amount: double", "amount: long", 1)
    text = text.replace("unit_price: decimal(10,2)", "unit_price: decimal(10,3)", 1)
    refused.write_text(text.replace("record_key: order_id", "record_key: customer_id", 1))
    run.put([order(n, 100 + n) for n in range(30, 35)], start=1000)
    before = storage_state(run)
    columns_before = run.query("SHOW COLUMNS FROM hudi_orders_cow")
    # Refused in the same start: another bucket count for the Merge-on-Read table, whose
    # stored keys it would hash to other file groups (each updated key then stored twice),
    # and an ordering field other than the one Hudi created the tables with (Hudi fails the
    # first write: the job was restarted into the same failure).
    eight = ("--hudi-option", "hoodie.bucket.index.num.buckets=8")
    ordering = ("--hudi-option", "hoodie.datasource.write.precombine.field=updated_at")
    job = run.start_job(
        "--available-now", "--tables", str(refused), "--trino-url", trino, *eight, *ordering
    )
    assert job.wait(600) == EXIT_REFUSED_CONFIG, tail(run.log)
    log = run.log.read_text(errors="replace")
    for needle in (
        "nothing was written",
        "column 'status' (string) is in the table but no longer declared",
        "column 'amount' changed type from double to bigint",
        "column 'unit_price' changed type from decimal(10,2) to decimal(10,3)",
        "record_key changed from 'order_id' to 'customer_id'",
        f"{refused}, entry 'orders', table hudi_orders_mor",
        "hudi_orders_mor: laid out as index=BUCKET engine=SIMPLE buckets=4 hash_field=order_id; "
        "this run asks for index=BUCKET engine=SIMPLE buckets=8",
        "hudi_orders_cow: hoodie.datasource.write.precombine.field: 'updated_at', created "
        "with 'order_ts' (stored as hoodie.table.precombine.field)",
    ):
        assert needle in log, f"{needle!r} not in the job's log:\n{tail(run.log)}"
    # The declared key is the declarations' to report, not again as a Hudi setting.
    assert "hoodie.datasource.write.recordkey.field" not in log, tail(run.log)
    assert storage_state(run) == before, "a refused start wrote to the tables or checkpoint"
    diff = ["schema", "diff", "--tables", str(refused), "--warehouse", run.warehouse]
    assert cli.main(diff) == EXIT_REFUSED_CONFIG  # `lakehouse schema diff` says so first
    assert run.query("SHOW COLUMNS FROM hudi_orders_cow") == columns_before

    # Evolved: `coupon` declared between amount and status, qty and price widened; updates,
    # deletes and a late (older) update of keys written before the change.
    tables.write_text(EVOLVED_TABLES)
    run.put(
        [
            order(1, 200, status="paid", coupon="WINTER", qty=1.5, unit_price="1234567890.12"),
            order(2, 200, op="d"),
            order(3, 200, status="shipped"),  # no coupon: NULL
            order(4, 2, status="stale", coupon="LATE"),  # older than o-004's first event
            order(40, 200, coupon="NEW"),
        ],
        start=2000,
    )
    diff = ["schema", "diff", "--tables", str(tables), "--warehouse", run.warehouse]
    assert cli.main(diff) == 0
    run.run_job("--available-now", "--final-compaction", *args)

    expected: dict[str, tuple[str, float, str | None]] = {
        f"o-{n:03d}": ("created", float(n), None) for n in range(35)
    }
    expected.update(
        {
            "o-001": ("paid", 1.0, "WINTER"),
            "o-003": ("shipped", 3.0, None),
            "o-040": ("created", 40.0, "NEW"),
        }
    )
    del expected["o-002"]
    db = run.database
    not_deleted = "WHERE NOT _is_deleted"
    assert live_rows(run, "FROM orders") == expected, "live view"
    assert live_rows(run, f"FROM hudi.{db}.hudi_orders_cow {not_deleted}") == expected, "CoW"
    assert live_rows(run, f"FROM hudi.{db}.hudi_orders_mor_ro {not_deleted}") == expected, "MoR"
    # Users see declaration order; the tables appended the column.
    view_columns = [r[0] for r in run.query("SHOW COLUMNS FROM orders", catalog="hive")]
    assert view_columns[:8] == [
        *("order_id", "customer_id", "amount", "qty", "unit_price", "coupon", "status", "order_ts")
    ]
    cow_columns = [r[0] for r in run.query("SHOW COLUMNS FROM hudi_orders_cow")]
    assert cow_columns[-1] == "coupon"
    # The widened columns, old rows included, in their new types everywhere.
    widened = {"qty": "double", "unit_price": "decimal(12,2)"}
    for table, catalog in (("hudi_orders_cow", "hudi"), ("hudi_orders_mor_ro", "hudi")):
        assert widened.items() <= column_types(run, table, catalog).items(), table
    assert widened.items() <= column_types(run, "orders", "hive").items(), "live view"
    typed = {
        key: ("float", float(n), Decimal(f"{n}.25"))
        for n in (*range(35), 40)
        if (key := f"o-{n:03d}") != "o-002"
    }
    typed["o-001"] = ("float", 1.5, Decimal("1234567890.12"))
    assert typed_rows(run, "FROM orders") == typed, "live view, widened"
    assert typed_rows(run, f"FROM hudi.{db}.hudi_orders_cow {not_deleted}") == typed, "CoW"
    assert typed_rows(run, f"FROM hudi.{db}.hudi_orders_mor_ro {not_deleted}") == typed, "MoR"
    widening = "widening hudi_orders_mor (qty to double, unit_price to decimal(12,2))"
    assert widening in run.log.read_text()
    json_rows = run.query("SELECT count(*), count(coupon) FROM orders_json", catalog="hive")
    assert json_rows == [[40, 3]]  # every event as it arrived; three carried a coupon
    assert "Trino: orders_json has other columns than declared now" in run.log.read_text()
    assert "schema change:" in run.log.read_text()

    # Backfill from the raw copy: the early coupons arrive; the precombine rules decide as
    # before (o-004's late event still loses, o-002 stays deleted, o-001 keeps WINTER).
    backfill = job_command(
        run.job_args("--event-type", "orders", *args), module="lakehouse_job.backfill"
    )
    done = subprocess.run(backfill, env=job_env(run.settings), capture_output=True, text=True)
    assert done.returncode == 0, done.stdout[-3000:]
    assert "backfill done: 40 records of orders" in done.stdout
    expected.update({"o-010": ("created", 10.0, "EARLY"), "o-011": ("created", 11.0, "EARLY")})
    assert live_rows(run, f"FROM hudi.{db}.hudi_orders_cow {not_deleted}") == expected, "CoW"
    assert live_rows(run, "FROM orders") == expected, "live view after the backfill"
    assert len(run.raw_json_lines("hudi_orders")) == 40  # the raw copy is not written again

    # From the quarantine: o-050, refused while qty was a long, is accepted now that it is a
    # double, and leaves the quarantine.
    quarantined = f"SELECT reason FROM hudi.{db}.quarantine WHERE event_type = 'orders'"
    reasons = [r[0] for r in run.query(quarantined)]
    assert len(reasons) == 1 and reasons[0].startswith("wrong type for qty"), reasons
    redrive = job_command(
        run.job_args("--event-type", "orders", "--from-quarantine", *args),
        module="lakehouse_job.backfill",
    )
    done = subprocess.run(redrive, env=job_env(run.settings), capture_output=True, text=True)
    assert done.returncode == 0, done.stdout[-3000:]
    assert "1 quarantined records of orders, 1 accepted" in done.stdout, done.stdout[-3000:]
    expected["o-050"] = ("created", 50.0, None)
    assert live_rows(run, f"FROM hudi.{db}.hudi_orders_cow {not_deleted}") == expected, "CoW"
    assert run.query(quarantined) == []
    # And it joins the raw copy, so a backfill from it would bring o-050 back too.
    assert "1 accepted records added to the raw JSON copy" in done.stdout
    lines = run.raw_json_lines("hudi_orders")
    assert len(lines) == 41 and sum('"o-050"' in line for line in lines) == 1
    assert run.query("SELECT count(*) FROM orders_json", catalog="hive") == [[41]]


EVOLUTION_POINTS = (
    "during:SparkRDDWriteClient.insertOverwriteTable",  # the first widening rewrite
    "after-rewrite:hudi_orders_cow",  # rewritten, the metastore not yet changed
    "after:hudi_orders_cow",
    "during:HiveSyncTool.syncHoodieTable",
    "before-commit",
)


@pytest.mark.faults
@pytest.mark.long
def test_a_crash_at_each_step_of_an_evolution_converges(run: Run, tmp_path: Path) -> None:
    """The job killed during the rewrite of a widened table, after it (before the
    metastore is changed), after the first commit in the new schema (CoW written, MoR not),
    during that commit's metastore sync and before Spark commits the batch: each restart
    rewrites again or aligns the metastore, and replays the batch, whose first commit of
    the run syncs the metastore again."""
    tables = tmp_path / "tables.yaml"
    tables.write_text(BASE_TABLES)
    trino = f"http://127.0.0.1:{run.settings.port('TRINO_PORT')}"
    run.put([order(n, n) for n in range(40)])
    run.run_job("--available-now", "--tables", str(tables), "--trino-url", trino)

    tables.write_text(EVOLVED_TABLES)
    updates = [
        order(n, 100 + n, status="paid", coupon=f"C{n}", qty=n + 0.5) for n in range(0, 40, 2)
    ]
    run.put(updates, start=1000)
    state = tmp_path / "crash-state"
    job_args = run.job_args(
        *("--tables", str(tables), "--trino-url", trino),
        *("--trigger-seconds", "1", "--max-records-per-shard", "5"),
    )
    spec = job_spec(run.settings, job_args, keepalive_args=("--max-backoff", "2"))
    spec = replace(
        spec, env={**spec.env, POINTS_ENV: ",".join(EVOLUTION_POINTS), STATE_ENV: str(state)}
    )
    supervisor = Supervisor(tmp_path / "run", tmp_path / "logs")
    supervisor.start(spec, progress=lambda _line: None)
    try:
        wait_for(lambda: fired_points(state) == set(EVOLUTION_POINTS), 600, "every crash point")
        wait_for(lambda: run.records_done() >= len(updates), 300, "every update after them")
    finally:
        supervisor.stop("job", timeout_s=120)
    run.run_job("--available-now", "--final-compaction", "--tables", str(tables))

    expected: dict[str, tuple[str, float, str | None]] = {
        f"o-{n:03d}": ("created", float(n), None) for n in range(40)
    }
    expected.update({f"o-{n:03d}": ("paid", float(n), f"C{n}") for n in range(0, 40, 2)})
    db = run.database
    not_deleted = "WHERE NOT _is_deleted"
    assert live_rows(run, f"FROM hudi.{db}.hudi_orders_cow {not_deleted}") == expected, "CoW"
    assert live_rows(run, f"FROM hudi.{db}.hudi_orders_mor_ro {not_deleted}") == expected, "MoR"
    wait_for(
        lambda: "coupon" in [r[0] for r in run.query("SHOW COLUMNS FROM orders", catalog="hive")],
        60,
        "the live view with the new column",
    )
    assert live_rows(run, "FROM orders") == expected, "live view"
    typed = {f"o-{n:03d}": ("float", n + (n % 2 == 0) * 0.5, Decimal(f"{n}.25")) for n in range(40)}
    for table in ("hudi_orders_cow", "hudi_orders_mor_ro"):
        assert typed_rows(run, f"FROM hudi.{db}.{table}") == typed, table
    assert column_types(run, "orders", "hive")["unit_price"] == "decimal(12,2)"
