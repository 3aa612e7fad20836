"""The CDC part of the stack: its PostgreSQL (cluster, database, schema) and its oracle.

PostgreSQL -> Debezium (services/cdc, lakehouse.services.cdc_spec) -> Kinesis, one stream
per table -> the job with services/cdc/tables.yaml -> Trino. The oracle is the database
itself: `verify` compares every captured table with its live view in Trino, column by
column.
"""

from __future__ import annotations

import json
import math
import os
import pwd
import shutil
import subprocess
import urllib.error
import urllib.request
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

from lakehouse.config import SERVICES_DIR, Settings
from lakehouse_tables.declarations import Tables, TableSpec, load_tables

Progress = Callable[[str], object]

CDC_TABLES_YAML: Final = SERVICES_DIR / "cdc" / "tables.yaml"
SCHEMA_SQL: Final = SERVICES_DIR / "cdc" / "schema.sql"
# PostgreSQL refuses to run as root; as root, the stack runs it as Debian's postgres user.
_PG_USER: Final = "postgres"


class CdcError(Exception):
    """The CDC part cannot start or check; the message says what to do."""


def enabled(settings: Settings) -> bool:
    return settings["CDC_ENABLED"].strip().lower() in ("1", "true", "yes", "on")


def local_postgres(settings: Settings) -> bool:
    return settings["CDC_POSTGRES"] == "local"


def pg_data_dir(settings: Settings) -> Path:
    return settings.data_dir / "postgres"


def offsets_file(settings: Settings) -> Path:
    """Debezium's offsets, durable across restarts of the service (state dir)."""
    return settings.data_dir / "cdc" / "offsets.dat"


def state_dir(settings: Settings) -> Path:
    """The CDC service's state: offsets, capture-state.json, snapshot keys, its last error."""
    return offsets_file(settings).parent


# Written by the CDC service (lakehouse.cdc.ResumeCheck) when its stored position cannot be
# resumed; read by `up --cdc` and `status`.
CAPTURE_ERROR: Final = "capture-error.json"
# Which tables' rows were delivered (lakehouse.cdc.CaptureState).
CAPTURE_STATE: Final = "capture-state.json"
# What a reset moves aside: the engine's offsets and the service's records beside them.
_RESET_MOVES: Final = (
    "offsets.dat",
    "snapshot-delivered",
    "snapshot-keys-*",
    "incremental-keys-*",
    "lake-keys-*",
    CAPTURE_STATE,
    CAPTURE_ERROR,
)


def capture_error(settings: Settings) -> dict[str, Any] | None:
    """The CDC service's last start-up refusal (database, slot, stored position, message)."""
    path = state_dir(settings) / CAPTURE_ERROR
    try:
        return dict(json.loads(path.read_text()))
    except (OSError, ValueError):
        return None


def capture_state(settings: Settings) -> dict[str, Any]:
    """Which tables the lake has the rows of, and which wait for their snapshot."""
    path = state_dir(settings) / CAPTURE_STATE
    try:
        return dict(json.loads(path.read_text()))
    except (OSError, ValueError):
        return {}


def reset_plan(files: Iterable[str]) -> list[str]:
    """The names among `files` (of the state dir) that a reset moves aside."""
    from fnmatch import fnmatch

    return sorted(name for name in files if any(fnmatch(name, p) for p in _RESET_MOVES))


def reset(settings: Settings, progress: Progress = print, now: datetime | None = None) -> Path:
    """Start the capture over, the CDC service stopped: its replication slot dropped (if the
    server still has it), its state moved aside into before-reset-<time>/, and a record that
    says the next start streams from a new slot at once and snapshots every table
    incrementally. An incremental snapshot can delete the rows the lake holds and the
    database no longer has (the service folds each table's stream first); an initial one
    cannot. Returns the folder the old state went to."""
    slot = settings["CDC_SLOT"]
    database = settings["CDC_PG_DATABASE"]
    where = f"{settings['CDC_PG_HOST']}:{settings['CDC_PG_PORT']}"
    import psycopg

    try:
        with connect(settings) as conn:
            row = conn.execute(
                "SELECT active FROM pg_replication_slots WHERE slot_name = %s", (slot,)
            ).fetchone()
            if row is not None and row[0]:
                raise CdcError(
                    f"replication slot '{slot}' in database '{database}' on {where} is in use "
                    "(a CDC service still runs against it): stop it first (`lakehouse down`)"
                )
            if row is not None:
                conn.execute("SELECT pg_drop_replication_slot(%s)", (slot,))
                progress(f"  dropped replication slot '{slot}' in database '{database}'")
            signal = settings.env.get("CDC_SIGNAL_TABLE", "")
            if signal:
                found = conn.execute("SELECT to_regclass(%s) IS NOT NULL", (signal,)).fetchone()
                if not found or not found[0]:
                    raise CdcError(
                        f"the signal table {signal} (CDC_SIGNAL_TABLE) does not exist in "
                        f"database '{database}' on {where}: a reset snapshots every table "
                        "through it. Create it (services/cdc/cdc.env shows how) and run the "
                        "reset again"
                    )
    except psycopg.OperationalError as error:
        raise CdcError(
            f"cannot reach database '{database}' on {where} to drop replication slot "
            f"'{slot}': {error}".strip()
        ) from None
    state = state_dir(settings)
    state.mkdir(parents=True, exist_ok=True)
    stamp = (now or datetime.now(UTC)).strftime("%Y%m%dT%H%M%SZ")
    aside = state / f"before-reset-{stamp}"
    aside.mkdir()
    for name in reset_plan(p.name for p in state.iterdir() if p.is_file()):
        (state / name).rename(aside / name)
    (state / CAPTURE_STATE).write_text(
        json.dumps({"initial_snapshot": False, "captured": [], "pending": {}}, indent=2) + "\n"
    )
    progress(f"  the old capture's state kept in {aside}")
    return aside


# Keys the lake's live views held at a reset, read by the CDC service (IncrementalKeys).
LAKE_KEYS_PREFIX: Final = "lake-keys-"


def lake_key_lines(keys: Iterable[str], rows: Iterable[Any]) -> list[str]:
    """Rows of (key values..., position) as the CDC service reads them: the position, a tab,
    the key as Debezium's JSON ({"order_id":5}), a line each."""
    names = list(keys)
    return [
        f"{row[len(names)]}\t"
        + json.dumps(dict(zip(names, row[: len(names)], strict=True)), separators=(",", ":"),
                     ensure_ascii=False)
        for row in rows
    ]  # fmt: skip


def write_lake_keys(
    settings: Settings,
    trino_cursor: Any,
    database: str,
    tables: Tables,
    progress: Progress = print,
) -> None:
    """Each captured table's keys live in the lake (its live view in Trino) and their log
    positions, written beside the offsets for the next start of the CDC service: a reset
    deletes the rows the lake holds and the database no longer has, and the lake's stream
    may have lost them (a local Kinesis engine keeps streams in memory only, a real one
    trims them after its retention). A table whose view cannot be read is said and left to
    its stream."""
    captured = {t.strip() for t in settings["CDC_TABLES"].split(",")}
    for spec in tables.values():
        if spec.format != "debezium" or captured_table(spec) not in captured:
            continue
        table = captured_table(spec)
        try:
            trino_cursor.execute(
                f"SELECT {', '.join(spec.record_keys)}, {spec.precombine} "
                f"FROM hive.{database}.{spec.event_type}"
            )
            rows = trino_cursor.fetchall()
        except Exception as error:  # whatever failed, the stream alone decides
            progress(
                f"  {table}: the lake's view {spec.event_type} cannot be read ({error}); rows "
                "deleted meanwhile leave the lake only if its stream still holds them"
            )
            continue
        lines = lake_key_lines(spec.record_keys, rows)
        (state_dir(settings) / f"{LAKE_KEYS_PREFIX}{table}").write_text(
            "".join(line + "\n" for line in lines)
        )
        progress(f"  {table}: {len(lines):,} rows live in the lake, kept for the reconciliation")


def conninfo(settings: Settings, database: str | None = None) -> str:
    return (
        f"host={settings['CDC_PG_HOST']} port={settings['CDC_PG_PORT']} "
        f"dbname={database or settings['CDC_PG_DATABASE']} user={settings['CDC_PG_USER']} "
        f"password={settings['CDC_PG_PASSWORD']} connect_timeout=5"
        # Text as str whatever the database's encoding: psycopg returns bytes from a
        # SQL_ASCII database (the compose stand-in image's initdb default).
        " client_encoding=UTF8"
    )


def connect(settings: Settings, database: str | None = None) -> Any:
    import psycopg

    return psycopg.connect(conninfo(settings, database), autocommit=True)


def run_as_owner() -> list[str]:
    """The command prefix that runs PostgreSQL's binaries as a user it accepts."""
    if os.geteuid() != 0:
        return []
    try:
        pwd.getpwnam(_PG_USER)
    except KeyError:
        raise CdcError(
            "PostgreSQL refuses to run as root and there is no 'postgres' user: install "
            "Debian's postgresql package (it creates the user) or run as another user"
        ) from None
    return ["setpriv", f"--reuid={_PG_USER}", f"--regid={_PG_USER}", "--init-groups"]


def init_cluster(settings: Settings, bin_dir: Path, data: Path) -> None:
    """initdb once: a cluster of its own under the state dir, superuser CDC_PG_USER."""
    if (data / "PG_VERSION").exists():
        return
    shutil.rmtree(data, ignore_errors=True)  # debris of an initdb cut short
    data.mkdir(parents=True)
    password_file = data.parent / "postgres-password"
    password_file.write_text(settings["CDC_PG_PASSWORD"] + "\n")
    owner = run_as_owner()
    if owner:
        entry = pwd.getpwnam(_PG_USER)
        for path in (data, password_file):
            os.chown(path, entry.pw_uid, entry.pw_gid)
        _check_reachable(data)
    command = [
        *owner,
        str(bin_dir / "initdb"),
        "-D",
        str(data),
        "-U",
        settings["CDC_PG_USER"],
        f"--pwfile={password_file}",
        "--auth-host=scram-sha-256",
        "--auth-local=peer",
        "--encoding=UTF8",
        "--no-locale",
    ]
    try:
        done = subprocess.run(command, capture_output=True, text=True, check=False)
    finally:
        password_file.unlink(missing_ok=True)
    if done.returncode != 0:
        shutil.rmtree(data, ignore_errors=True)
        raise CdcError(f"initdb failed ({' '.join(command)}):\n{done.stdout}{done.stderr}")


def _check_reachable(data: Path) -> None:
    probe = subprocess.run([*run_as_owner(), "test", "-w", str(data)], check=False)
    if probe.returncode != 0:
        raise CdcError(
            f"PostgreSQL runs as user {_PG_USER}, which cannot reach {data}: give the state "
            "dir's parents o+x (or set LAKEHOUSE_STATE to a folder it can reach)"
        )


def postgres_command(settings: Settings, bin_dir: Path, data: Path) -> list[str]:
    return [
        *run_as_owner(),
        str(bin_dir / "postgres"),
        "-D",
        str(data),
        "-p",
        settings["CDC_PG_PORT"],
        "-c",
        "listen_addresses=127.0.0.1",
        "-c",
        "unix_socket_directories=",
        # Logical decoding for Debezium's pgoutput slot.
        "-c",
        "wal_level=logical",
        "-c",
        "max_wal_senders=8",
        "-c",
        "max_replication_slots=8",
        "-c",
        f"shared_buffers={settings['PG_SHARED_BUFFERS']}",
    ]


def debezium_health(settings: Settings) -> dict[str, Any]:
    """The CDC service's /health answer: state, streaming (past the snapshot),
    events_written, last_batch_ms; {} when it does not answer."""
    url = f"http://127.0.0.1:{settings['CDC_HEALTH_PORT']}/health"
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return dict(json.load(response))
    except urllib.error.HTTPError as error:
        return dict(json.load(error))
    except (OSError, ValueError):
        return {}


def postgres_healthy(settings: Settings) -> bool:
    with connect(settings, "postgres") as conn:
        return conn.execute("SELECT 1").fetchone() == (1,)


def bootstrap(settings: Settings, progress: Progress = print) -> None:
    """The database and the sample schema (services/cdc/schema.sql), idempotently."""
    with connect(settings, "postgres") as conn:
        database = settings["CDC_PG_DATABASE"]
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (database,))
        if exists.fetchone() is None:
            from psycopg import sql

            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(database)))
            progress(f"  PostgreSQL database {database} created")
    with connect(settings) as conn:
        conn.execute(SCHEMA_SQL.read_text())
    progress(f"  PostgreSQL schema ready ({settings['CDC_TABLES']})")


# --- The oracle ----------------------------------------------------------------------


def captured_table(spec: TableSpec) -> str:
    """The PostgreSQL table an entry's stream carries: <prefix>.<schema>.<table>."""
    if spec.stream is None or spec.stream.count(".") < 2:
        raise CdcError(
            f"{spec.event_type}: stream {spec.stream!r} does not name a table as Debezium "
            "does (<topic prefix>.<schema>.<table>)"
        )
    schema, table = spec.stream.split(".")[-2:]
    return f"{schema}.{table}"


def _normalised(value: Any) -> Any:
    """One form for a value from PostgreSQL or Trino: instants as UTC micros, integers as
    doubles; a numeric stays a Decimal, compared exactly (decimal.handling.mode=string
    carries its digits, the tables file declares it decimal(p,s))."""
    if isinstance(value, datetime):
        aware = value if value.tzinfo else value.replace(tzinfo=UTC)
        delta = aware - datetime(1970, 1, 1, tzinfo=UTC)
        return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds
    if isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, float) and math.isnan(value):
        return "NaN"
    return value


def compared_columns(spec: TableSpec, pg_columns: Iterable[str]) -> list[str]:
    """The declared columns the table has (not the ones the unwrap fills)."""
    present = set(pg_columns)
    return [name for name in spec.schema if name in present]


def differences(
    spec: TableSpec,
    pg_rows: Mapping[Any, tuple[Any, ...]],
    lake_rows: Mapping[Any, tuple[Any, ...]],
    columns: list[str],
    limit: int = 10,
) -> list[str]:
    """What differs between the database's rows and the live view's, keyed by record key."""
    found: list[str] = []
    for key in sorted(pg_rows.keys() - lake_rows.keys(), key=str)[:limit]:
        found.append(f"{spec.event_type}: key {key} in PostgreSQL, missing from the lake")
    for key in sorted(lake_rows.keys() - pg_rows.keys(), key=str)[:limit]:
        found.append(f"{spec.event_type}: key {key} in the lake, not in PostgreSQL")
    for key in sorted(pg_rows.keys() & lake_rows.keys(), key=str):
        pg = [_normalised(v) for v in pg_rows[key]]
        lake = [_normalised(v) for v in lake_rows[key]]
        for name, a, b in zip(columns, pg, lake, strict=True):
            if a != b:
                found.append(f"{spec.event_type}: key {key}: {name} is {a!r} in PostgreSQL, {b!r}")
        if len(found) >= 3 * limit:
            break
    return found


# Where keyed() puts the keys it found more than once.
_DUPLICATES: Final = ("__duplicates__",)


def keyed(rows: Iterable[Any], key_columns: int) -> dict[Any, tuple[Any, ...]]:
    """Rows by their key: the first column's value, or a tuple of the first `key_columns`
    for a key of several columns; the rest of the row is the value. A key found twice is
    listed under _DUPLICATES (a live view must hold each key once)."""
    found: dict[Any, tuple[Any, ...]] = {}
    twice: list[Any] = []
    for row in rows:
        key = row[0] if key_columns == 1 else tuple(row[:key_columns])
        if key in found:
            twice.append(key)
        found[key] = tuple(row[key_columns:])
    if twice:
        found[_DUPLICATES] = tuple(twice)
    return found


def verify(
    settings: Settings,
    trino_cursor: Any,
    database: str,
    tables: Tables | None = None,
    say: Progress = print,
) -> bool:
    """Every captured table equals its live view in Trino (hive.<database>.<entry>)."""
    tables = tables or load_tables(CDC_TABLES_YAML)
    ok = True
    with connect(settings) as conn:
        for spec in tables.values():
            if spec.format != "debezium":
                continue
            table = captured_table(spec)
            schema_name, table_name = table.split(".")
            pg_columns = [
                row[0]
                for row in conn.execute(
                    "SELECT column_name FROM information_schema.columns "
                    "WHERE table_schema = %s AND table_name = %s",
                    (schema_name, table_name),
                )
            ]
            if not pg_columns:
                raise CdcError(f"{spec.event_type}: PostgreSQL has no table {table}")
            columns = compared_columns(spec, pg_columns)
            select = ", ".join(columns)
            keys = ", ".join(spec.record_keys)
            pg_values = keyed(
                conn.execute(f"SELECT {keys}, {select} FROM {table}"), len(spec.record_keys)
            )
            trino_cursor.execute(f"SELECT {keys}, {select} FROM hive.{database}.{spec.event_type}")
            lake_rows = keyed(trino_cursor.fetchall(), len(spec.record_keys))
            duplicates = len(lake_rows.pop(_DUPLICATES, ()))
            found = differences(spec, pg_values, lake_rows, columns)
            if duplicates:
                found.append(f"{spec.event_type}: {duplicates} keys live more than once")
            status = "equal" if not found else f"{len(found)}+ differences"
            say(
                f"{table} -> {spec.event_type}: {len(pg_values):,} rows in PostgreSQL, "
                f"{len(lake_rows):,} in the live view, {len(columns)} columns: {status}"
            )
            for line in found:
                say(f"  {line}")
            ok = ok and not found
    return ok
