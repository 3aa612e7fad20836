"""Compare the ledger's expected table state with what Trino returns (and, for the
tests, the ledger with what is on the stream).

    python -m loadgen.verify --ledger-dir ledger --host localhost --port 8080 \
        --catalog hudi --schema default [--event-type orders] [--table-suffix _cow] \
        [--table hudi_orders_cow] [--where "_hoodie_is_deleted = false"]

Prints matched / missing / extra / stale counts per table and exits non-zero on any
difference. The comparison (`diff_rows`, `compare_stream`) is pure.
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any

from lakehouse_tables.declarations import Tables, TableSpec, compared_columns, load_tables
from loadgen.ledger import entry_data, expected_state, read_ledger
from loadgen.timefmt import datetime_to_ms, format_ms, parse_iso_ms

# --------------------------------------------------------------------------- pure diff


def normalize_actual(ftype: str, v: Any) -> Any:
    """A value as returned by Trino -> the ledger's canonical form (timestamps as epoch
    ms, truncated to millisecond precision; naive datetimes are UTC)."""
    if v is None:
        return None
    if ftype == "timestamp":
        if isinstance(v, datetime):
            return datetime_to_ms(v)
        if isinstance(v, str):
            ms = parse_iso_ms(v)
            if ms is None:  # '2026-11-22 19:00:00.123[456]'
                try:
                    return datetime_to_ms(datetime.fromisoformat(v.replace("Z", "+00:00")))
                except ValueError:
                    return v
            return ms
        return v
    if ftype == "double":
        return float(v)
    if ftype == "long":
        return int(v)
    if isinstance(v, date):
        return v.isoformat()
    return v


def _equal(ftype: str, a: Any, b: Any) -> bool:
    if ftype == "double" and isinstance(a, float) and isinstance(b, float):
        return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)
    return bool(a == b)


@dataclass
class TableDiff:
    table: str
    expected: int = 0
    actual: int = 0
    matched: int = 0
    missing: int = 0  # expected key not returned
    extra: int = 0  # returned key not expected (includes deleted keys still visible)
    stale: int = 0  # key present, some column differs (usually an older version)
    duplicate_keys: int = 0  # key returned more than once
    samples: dict[str, list[Any]] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not (self.missing or self.extra or self.stale or self.duplicate_keys)

    def _sample(self, what: str, item: Any, limit: int = 5) -> None:
        lst = self.samples.setdefault(what, [])
        if len(lst) < limit:
            lst.append(item)

    def summary(self) -> str:
        return (
            f"{self.table}: expected={self.expected} actual={self.actual} "
            f"matched={self.matched} missing={self.missing} extra={self.extra} "
            f"stale={self.stale} duplicate_keys={self.duplicate_keys} "
            f"-> {'OK' if self.ok else 'DIFF'}"
        )


def column_types(spec: TableSpec, columns: Sequence[str]) -> dict[str, str]:
    return {c: spec.schema.get(c, "string") for c in columns}


def diff_rows(
    table: str,
    key_field: str,
    types: Mapping[str, str],
    expected: Mapping[str, Mapping[str, Any]],
    actual: Iterable[Mapping[str, Any]],
) -> TableDiff:
    """expected: key -> canonical row (ledger.expected_row); actual: rows from Trino
    (any value form normalize_actual understands). Compares the columns in `types`."""
    d = TableDiff(table=table, expected=len(expected))
    seen: set[str] = set()
    for raw in actual:
        d.actual += 1
        row = {c: normalize_actual(t, raw.get(c)) for c, t in types.items()}
        key = str(row.get(key_field))
        if key in seen:
            d.duplicate_keys += 1
            d._sample("duplicate_keys", key)
            continue
        seen.add(key)
        exp = expected.get(key)
        if exp is None:
            d.extra += 1
            d._sample("extra", _printable(row, types))
            continue
        diffs = {
            c: (_show(t, exp.get(c)), _show(t, row.get(c)))
            for c, t in types.items()
            if not _equal(t, exp.get(c), row.get(c))
        }
        if diffs:
            d.stale += 1
            d._sample("stale", {"key": key, "expected_vs_actual": diffs})
        else:
            d.matched += 1
    for key in expected:
        if key not in seen:
            d.missing += 1
            d._sample("missing", key)
    return d


def _show(ftype: str, v: Any) -> Any:
    return format_ms(v) if ftype == "timestamp" and isinstance(v, int) else v


def _printable(row: Mapping[str, Any], types: Mapping[str, str]) -> dict[str, Any]:
    return {c: _show(t, row.get(c)) for c, t in types.items()}


@dataclass
class StreamDiff:
    matched: int = 0
    missing_on_stream: int = 0  # acknowledged in the ledger, not read back
    not_in_ledger: int = 0  # read back, not an acknowledged ledger record
    data_mismatch: int = 0  # same shard/sequence number, different bytes
    samples: list[Any] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not (self.missing_on_stream or self.not_in_ledger or self.data_mismatch)


def compare_stream(
    stream_records: Iterable[tuple[str, str, bytes]], ledger_entries: Iterable[Mapping[str, Any]]
) -> StreamDiff:
    """Record for record: (shard_id, sequence_number) -> bytes, both ways."""
    ledger: dict[tuple[str, str], bytes] = {}
    for e in ledger_entries:
        if e.get("acked"):
            ledger[(str(e["shard_id"]), str(e["sequence_number"]))] = entry_data(dict(e))
    d = StreamDiff()
    for shard, seq, data in stream_records:
        want = ledger.pop((shard, seq), None)
        if want is None:
            d.not_in_ledger += 1
            if len(d.samples) < 5:
                d.samples.append(("not_in_ledger", shard, seq, data[:100]))
        elif want != data:
            d.data_mismatch += 1
            if len(d.samples) < 5:
                d.samples.append(("mismatch", shard, seq, want[:100], data[:100]))
        else:
            d.matched += 1
    d.missing_on_stream = len(ledger)
    for k in list(ledger)[:5]:
        d.samples.append(("missing_on_stream", *k))
    return d


# --------------------------------------------------------------------------- trino


def query_table(
    conn: Any, catalog: str, schema: str, table: str, columns: Sequence[str], where: str | None
) -> list[dict[str, Any]]:
    cols = ", ".join(f'"{c}"' for c in columns)
    sql = f'SELECT {cols} FROM "{catalog}"."{schema}"."{table}"'
    if where:
        sql += f" WHERE {where}"
    cur = conn.cursor()
    cur.execute(sql)
    return [dict(zip(columns, r, strict=True)) for r in cur.fetchall()]


def connect(host: str, port: int, user: str, catalog: str, schema: str, http_scheme: str) -> Any:
    import trino

    return trino.dbapi.connect(
        host=host, port=port, user=user, catalog=catalog, schema=schema, http_scheme=http_scheme
    )


def verify_tables(
    tables: Tables,
    ledger_dir: str,
    conn: Any,
    catalog: str,
    schema: str,
    event_types: Sequence[str] | None = None,
    table: str | None = None,
    table_suffix: str = "_cow",
    where: str | None = None,
    partition_column: bool = True,
    out: Any = sys.stdout,
) -> list[TableDiff]:
    exp = expected_state(read_ledger(ledger_dir), tables)
    print(
        "ledger: "
        + " ".join(f"{k}={v}" for k, v in sorted(exp.counts.items()))
        + f" deleted={dict(exp.deleted)} malformed={dict(exp.malformed)}",
        file=out,
    )
    types_to_check = list(event_types or sorted(exp.rows.keys() | exp.deleted.keys()))
    if table and len(types_to_check) != 1:
        raise SystemExit("--table needs exactly one --event-type")
    diffs = []
    for et in types_to_check:
        spec = tables[et]
        name = table or f"{spec.table}{table_suffix}"
        cols = compared_columns(spec) if partition_column else list(spec.schema)
        types = column_types(spec, cols)
        actual = query_table(conn, catalog, schema, name, cols, where)
        d = diff_rows(name, spec.record_key, types, exp.rows.get(et, {}), actual)
        print(d.summary(), file=out)
        for what, items in d.samples.items():
            for it in items:
                print(f"  {what}: {it}", file=out)
        diffs.append(d)
    return diffs


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="loadgen.verify", description=__doc__.split("\n\n")[0])
    p.add_argument("--ledger-dir", default="ledger")
    p.add_argument("--tables", default=None, help="tables.yaml (default: the packaged one)")
    p.add_argument("--host", default="localhost")
    p.add_argument("--port", type=int, default=8080)
    p.add_argument("--user", default="loadgen")
    p.add_argument("--http-scheme", default="http")
    p.add_argument("--catalog", default="hudi")
    p.add_argument("--schema", default="default")
    p.add_argument(
        "--event-type",
        action="append",
        default=None,
        help="event type(s) to check (default: all in the ledger)",
    )
    p.add_argument("--table", default=None, help="table name (with one --event-type)")
    p.add_argument(
        "--table-suffix",
        default="_cow",
        help="appended to the tables.yaml base name: _cow, _mor_ro, _mor_rt",
    )
    p.add_argument("--where", default=None, help="SQL filter for live rows (default none)")
    p.add_argument(
        "--no-partition-column",
        dest="partition_column",
        action="store_false",
        help="do not compare the derived partition column",
    )
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    tables = load_tables(args.tables)
    conn = connect(args.host, args.port, args.user, args.catalog, args.schema, args.http_scheme)
    diffs = verify_tables(
        tables,
        args.ledger_dir,
        conn,
        args.catalog,
        args.schema,
        event_types=args.event_type,
        table=args.table,
        table_suffix=args.table_suffix,
        where=args.where,
        partition_column=args.partition_column,
    )
    return 0 if diffs and all(d.ok for d in diffs) else 1


if __name__ == "__main__":
    sys.exit(main())
