"""`make demo`: the whole flow on one machine, then a short report from Trino."""

from __future__ import annotations

import io
import json
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import TextIO

from lakehouse.core.clients import Endpoints, trino_connection
from lakehouse.core.config import Settings
from lakehouse.local import job_control, stack
from lakehouse.local.supervisor import log_tail
from lakehouse_tables.declarations import load_tables

Progress = Callable[[str], None]


def metrics_file(settings: Settings) -> Path:
    return settings.logs_dir / "job-metrics.jsonl"


def ledger_dir(settings: Settings) -> Path:
    return settings.state_dir / "ledger"


def start_job(settings: Settings, progress: Progress) -> None:
    """(Re)start the job in the background; it resumes from its checkpoint.

    The ledger and the job's metrics accumulate across demo runs, like the
    tables do; `make clean-state` removes all three together."""
    stack.supervisor_for(settings).stop(stack.JOB, timeout_s=job_control.STOP_TIMEOUT_S)
    job_control.start(settings, ["--metrics-file", str(metrics_file(settings))], progress)


def records_processed(settings: Settings) -> int:
    path = metrics_file(settings)
    if not path.exists():
        return 0
    return sum(json.loads(line)["records"] for line in path.read_text().splitlines() if line)


def acked_in_ledger(settings: Settings) -> int:
    from loadgen.ledger import read_ledger

    return sum(1 for entry in read_ledger(ledger_dir(settings)) if entry.get("acked"))


def wait_until_caught_up(
    settings: Settings, target: int, progress: Progress, timeout_s: float = 600
) -> bool:
    """Wait until the job has processed as many records as were acknowledged, then
    until Trino shows exactly the ledger's expected state (the last commit's hive
    sync and a compaction may still be on their way)."""
    deadline = time.monotonic() + timeout_s
    last = -1
    while time.monotonic() < deadline:
        _check_job_alive(settings)
        done = records_processed(settings)
        if done != last:
            progress(f"  job has processed {done:,} of {target:,} records")
            last = done
        if done >= target and all(ledger_matches(settings, s) for s in ("_cow", "_mor_ro")):
            return True
        time.sleep(3)
    return False


def _check_job_alive(settings: Settings) -> None:
    supervisor = stack.supervisor_for(settings)
    if not supervisor.is_running(stack.JOB):
        log = supervisor.log_file(stack.JOB)
        raise RuntimeError(f"the job stopped; last lines of {log}:\n{log_tail(log)}")


def verify_ledger(settings: Settings, table_suffix: str, out: TextIO = sys.stdout) -> bool:
    """Does each table (`_cow`, `_mor_ro`) hold exactly what the ledger expects? Prints
    the counts per table to `out` (`lakehouse verify`, the demo)."""
    return ledger_agrees(
        ledger_dir(settings),
        settings.endpoints,
        settings["LAKEHOUSE_DATABASE"],
        table_suffix,
        out,
    )


def ledger_agrees(
    ledger: Path, endpoints: Endpoints, database: str, table_suffix: str, out: TextIO
) -> bool:
    """The ledger in `ledger` against the tables Trino (at `endpoints`) shows, tombstones
    hidden; local mode and compose (`lakehouse verify --compose`) both check with it."""
    from loadgen import verify

    diffs = verify.verify_tables(
        load_tables(),
        str(ledger),
        trino_connection(endpoints, schema=database),
        "hudi",
        database,
        table_suffix=table_suffix,
        where="NOT _is_deleted",
        out=out,
    )
    return bool(diffs) and all(diff.ok for diff in diffs)


def ledger_matches(settings: Settings, table_suffix: str) -> bool:
    """verify_ledger, quietly; False while a table is not there yet."""
    try:
        return verify_ledger(settings, table_suffix, io.StringIO())
    except Exception:  # e.g. the table is not synced yet
        return False


def _commit_time(value: str) -> datetime:
    return datetime.strptime(value[:17], "%Y%m%d%H%M%S%f").replace(tzinfo=UTC)


# Orders carry their line items as array<struct<sku, qty, price decimal(10,2)>>.
TOP_ITEMS_SQL = (
    "SELECT i.sku, sum(i.qty) AS units, sum(i.qty * i.price) AS revenue "
    "FROM hudi_orders_cow CROSS JOIN UNNEST(items) AS i (sku, qty, price) "
    "WHERE NOT _is_deleted GROUP BY i.sku ORDER BY revenue DESC, i.sku LIMIT 5"
)


def report(settings: Settings, say: Progress) -> None:
    cursor = trino_connection(settings.endpoints, schema=settings["LAKEHOUSE_DATABASE"]).cursor()

    def one(sql: str) -> list:
        cursor.execute(sql)
        return cursor.fetchall()

    say("\nRow counts (Trino, live rows):")
    for table in ("hudi_orders_cow", "hudi_orders_mor_ro"):
        count = one(f"SELECT count(*) FROM {table} WHERE NOT _is_deleted")[0][0]
        say(f"  {table:<22} {count:>8,}")
    say(f"  {'quarantine':<22} {one('SELECT count(*) FROM quarantine')[0][0]:>8,}")

    say("\nSample query: top customers by order value (CoW snapshot)")
    sql = (
        "SELECT customer_id, count(*) AS orders, round(sum(amount), 2) AS total "
        "FROM hudi_orders_cow WHERE NOT _is_deleted "
        "GROUP BY customer_id ORDER BY total DESC LIMIT 5"
    )
    say(f"  {sql}")
    for customer, orders, total in one(sql):
        say(f"    {customer:<40} {orders:>4} orders {total:>12,.2f}")

    say("\nNested query: best-selling items (each order's items array, unnested)")
    say(f"  {TOP_ITEMS_SQL}")
    for sku, units, revenue in one(TOP_ITEMS_SQL):
        say(f"    {sku:<40} {units:>4} units {revenue:>12,.2f}")

    newest = one("SELECT max(order_ts), max(_hoodie_commit_time) FROM hudi_orders_cow")[0]
    if newest[0] is not None:
        event = newest[0].replace(tzinfo=UTC)
        committed = _commit_time(newest[1])
        say(
            f"\nFreshness: newest event {event:%H:%M:%S.%f} UTC, committed "
            f"{committed:%H:%M:%S} UTC, {(committed - event).total_seconds():.1f}s after "
            f"the event; queried {(datetime.now(UTC) - event).total_seconds():.1f}s after it"
        )
