"""`lakehouse cdc reset|declare`: the CDC capture's own commands; and what `status` says
of it."""

from __future__ import annotations

import argparse
import sys

from lakehouse.cli.common import Command, say
from lakehouse.core.config import Settings
from lakehouse.local import stack
from lakehouse.local.services import CDC_SERVICE_BUILDERS
from lakehouse.local.supervisor import ServiceStatus


def cdc_status_lines(settings: Settings, rows: list[ServiceStatus]) -> list[str]:
    """What `status` says of the capture: why it cannot resume, tables being snapshotted."""
    from lakehouse import cdc

    cdc_row = next((row for row in rows if row.name == "cdc"), None)
    if cdc_row is None or cdc_row.state != "running":
        # Also without a row: `up --cdc` (not CDC_ENABLED) whose service refused to start.
        error = cdc.capture_error(settings)
        return [f"CDC capture stopped: {error['message']}"] if error else []
    health = cdc.debezium_health(settings)
    failed = health.get("snapshots_failed") or {}
    pending = [t for t in health.get("snapshots_pending") or [] if t not in failed]
    lines = [
        f"CDC: the snapshot of {table} ended with {status}: its existing rows are not in the "
        "lake (the CDC service's log says why; a restart of the service asks again)"
        for table, status in failed.items()
    ]
    if pending:
        lines.append(f"CDC: existing rows of {', '.join(pending)} being snapshotted (incremental)")
    return lines


def cdc_command(settings: Settings, args: argparse.Namespace) -> int:
    """The capture's own commands: `reset` starts it over, `declare` prints tables-file
    entries."""
    from lakehouse import cdc

    if args.action == "declare":
        return cdc_declare(settings, args.table or settings["CDC_TABLES"].split(","))
    supervisor = stack.supervisor_for(settings)
    was_running = supervisor.is_running("cdc")
    if supervisor.stop("cdc"):
        say("  stopped the CDC service")
    if cdc.local_postgres(settings) and not supervisor.is_running("postgres"):
        supervisor.start(CDC_SERVICE_BUILDERS["postgres"](settings), say)
    try:
        if cdc.local_postgres(settings):
            cdc.bootstrap(settings, say)  # the signal table, in a database made before it
        cdc.reset(settings, say)
        lake_keys(settings, args.tables)
    except cdc.CdcError as error:
        say(f"error: {error}")
        return 2
    say(
        "The capture starts over: a new replication slot, then every table in CDC_TABLES "
        "snapshotted while changes stream; rows the lake holds that the database no longer "
        "has are deleted."
    )
    if was_running or supervisor.is_running("kinesis"):
        stack.start_cdc_service(settings, say)
        say("`lakehouse status` shows the tables still being snapshotted.")
    else:
        say("Start it with `lakehouse up --cdc`.")
    return 0


def lake_keys(settings: Settings, tables_file: str | None) -> None:
    """The lake's live keys for the service's reconciliation (lakehouse.cdc.write_lake_keys),
    when Trino answers; else the tables' streams alone decide."""
    from lakehouse import cdc
    from lakehouse.core.clients import trino_connection
    from lakehouse.local.supervisor import port_is_open
    from lakehouse_tables.declarations import load_tables

    if not port_is_open(settings.port("TRINO_PORT")):
        say(
            "  Trino is not running: the rows the lake holds and the database no longer has "
            "are deleted only if the tables' streams still hold them (start the stack and "
            "reset again to read them from the lake)"
        )
        return
    cursor = trino_connection(settings.endpoints, "hive").cursor()
    tables = load_tables(tables_file or cdc.CDC_TABLES_YAML)
    cdc.write_lake_keys(settings, cursor, settings["LAKEHOUSE_DATABASE"], tables, say)


def cdc_declare(settings: Settings, tables: list[str]) -> int:
    """Tables-file entries for the captured tables, from the database's catalog."""
    from lakehouse import cdc, cdc_declare

    try:
        with cdc.connect(settings) as conn:
            print(cdc_declare.declare(conn, tables), end="")
    except cdc.CdcError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    return 0


def _cdc_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "action",
        choices=["reset", "declare"],
        help="reset: start the capture over after its position was lost (a recreated or "
        "restored database, a dropped slot): a new replication slot, every table snapshotted "
        "again, the rows deleted meanwhile deleted in the lake; declare: print tables-file "
        "entries for the captured tables, read from the database's catalog",
    )
    parser.add_argument(
        "--tables",
        help="reset: the tables file whose live views hold the lake's rows (default: "
        "services/cdc/tables.yaml)",
    )
    parser.add_argument(
        "--table",
        action="append",
        help="declare: this table (schema.table; repeat for more) instead of CDC_TABLES",
    )


COMMANDS = {
    "cdc": Command(
        cdc_command,
        "the CDC capture: reset (start over, the lake kept right), declare",
        "pipeline",
        "lakehouse cdc reset\nlakehouse cdc declare --table public.order_lines > lines.yaml",
        _cdc_arguments,
        details="reset: exit 0 once the service runs again (or, with the stack down, once the "
        "state is ready for `lakehouse up --cdc`); 2 when the database cannot be reached or "
        "the slot is in use. declare: exit 2 naming a table the lake cannot key.",
    ),
}
