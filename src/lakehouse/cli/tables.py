"""`lakehouse tables|schema diff|backfill`: the declared entries, their tables, and changing
or refilling them."""

from __future__ import annotations

import argparse
import subprocess
from pathlib import Path
from typing import Any

from lakehouse.cli.common import (
    Command,
    say,
    tables_option,
)
from lakehouse.core.config import Settings
from lakehouse.local import job_launcher, stack


def tables(settings: Settings, args: argparse.Namespace) -> int:
    """Each entry of the tables file: its tables, row counts, newest commit (Trino)."""
    from datetime import datetime

    from lakehouse.core.clients import trino_connection
    from lakehouse.inspect import tables_report
    from lakehouse_tables.declarations import default_tables_path, load_tables

    tables = load_tables(args.tables or default_tables_path())
    database = settings["LAKEHOUSE_DATABASE"]
    cursor = trino_connection(settings.endpoints, "hive", database).cursor()

    def query(sql: str) -> list[Any]:
        cursor.execute(sql)
        return list(cursor.fetchall())

    try:
        reports = tables_report.gather(query, tables, database)
    except tables_report.UNREACHABLE as error:
        say(f"The stack is not running: Trino at {settings.trino_url} does not answer ({error}).")
        say("Start it with `lakehouse up` (or `make local-up`).")
        return 3
    say(f"Database {database}, tables file {args.tables or default_tables_path()}")
    say(tables_report.format_reports(reports, datetime.now().astimezone()))
    return 0


def schema(settings: Settings, args: argparse.Namespace) -> int:
    """`schema diff`: what the next start of the job would change in each table."""
    from lakehouse.core.clients import s3_client
    from lakehouse.inspect import schema_diff
    from lakehouse_tables.declarations import default_tables_path

    tables = Path(args.tables) if args.tables else default_tables_path()
    warehouse = args.warehouse or (
        f"s3a://{settings['LAKEHOUSE_BUCKET']}/warehouse/{settings['LAKEHOUSE_DATABASE']}.db"
    )
    refused = schema_diff.diff(s3_client(settings.endpoints), tables, warehouse, say)
    return 5 if refused else 0


def backfill(settings: Settings, args: argparse.Namespace) -> int:
    """Re-read one entry's raw JSON copy, or its quarantined records, into its Hudi tables
    (lakehouse_job.backfill)."""
    if stack.supervisor_for(settings).is_running(stack.JOB):
        say("The streaming job is running: stop it first (a backfill writes the same tables),")
        say("e.g. `lakehouse down` then `lakehouse up`, and start the job again after.")
        return 3
    job_args = ["--event-type", args.table]
    if args.arrived_from:
        job_args.append(f"--from={args.arrived_from}")
    if args.from_quarantine:
        job_args.append("--from-quarantine")
    if args.tables:
        job_args += ["--tables", args.tables]
    command = job_launcher.job_command(job_args, module="lakehouse_job.backfill")
    return subprocess.run(command, env=job_launcher.job_env(settings), check=False).returncode


def _tables_arguments(parser: argparse.ArgumentParser) -> None:
    tables_option(parser)


def _schema_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("action", choices=["diff"])
    tables_option(parser)
    parser.add_argument("--warehouse", help="the job's --warehouse (default: the local stack's)")


def _backfill_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--table", required=True, help="the tables file entry, e.g. orders")
    parser.add_argument(
        "--from", dest="arrived_from", help="records that arrived from this time on (ISO 8601)"
    )
    tables_option(parser)
    parser.add_argument(
        "--from-quarantine",
        action="store_true",
        help="the entry's quarantined records instead of its raw copy: those the job accepts "
        "now (a type declared or widened since) go to its tables and leave the quarantine",
    )


COMMANDS = {
    "tables": Command(
        tables,
        "each declared entry: its tables, row counts, newest commit",
        "tables",
        "lakehouse tables\nlakehouse tables --tables my-tables.yaml",
        _tables_arguments,
        "Counts are Trino's: the live view's rows, the raw copy's records; '-' for a table\n"
        "the job has not written yet. Exit code 3 when Trino does not answer (stack down).",
    ),
    "schema": Command(
        schema,
        "schema diff: what the job's next start changes in each table",
        "tables",
        "lakehouse schema diff --tables my-tables.yaml",
        _schema_arguments,
    ),
    "backfill": Command(
        backfill,
        "refill an entry's Hudi tables from its raw copy or quarantine",
        "tables",
        "lakehouse backfill --table orders --from 2026-01-01T00:00:00Z\n"
        "lakehouse backfill --table orders --from-quarantine",
        _backfill_arguments,
    ),
}
