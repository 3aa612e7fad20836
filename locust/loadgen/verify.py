"""Compare the ledger's expected table state with what Trino returns.

`lakehouse verify` (and the demo) call verify_tables, which prints matched / missing /
extra / stale counts per table; the comparison itself (`diff_rows`) is pure.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any

from lakehouse_tables import types as T
from lakehouse_tables.declarations import FieldType, Tables, TableSpec, compared_columns
from lakehouse_tables.rules import key_text
from lakehouse_tables.types import Primitive
from loadgen.ledger import canonical_decimal, expected_state, key_prefixes, read_ledger
from loadgen.timefmt import datetime_to_ms, format_ms, parse_iso_ms

# --------------------------------------------------------------------------- pure diff


def normalize_actual(ftype: FieldType, v: Any) -> Any:
    """A value as returned by Trino -> the ledger's canonical form (timestamps as epoch
    ms, truncated to millisecond precision; naive datetimes are UTC)."""
    if v is None:
        return None
    if isinstance(ftype, T.Decimal):
        return canonical_decimal(ftype, str(v))
    if isinstance(ftype, T.Struct):
        # Trino returns a row as a tuple (the client's NamedRowTuple), not by name.
        names = [name for name, _ in ftype.fields]
        values = v if isinstance(v, dict) else dict(zip(names, v, strict=True))
        return {name: normalize_actual(ft, values.get(name)) for name, ft in ftype.fields}
    if isinstance(ftype, T.Array):
        return [normalize_actual(ftype.element, item) for item in v]
    if isinstance(ftype, T.Map):
        return {key: normalize_actual(ftype.value, item) for key, item in v.items()}
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


def _equal(ftype: FieldType, a: Any, b: Any) -> bool:
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


def column_types(spec: TableSpec, columns: Sequence[str]) -> dict[str, FieldType]:
    return {c: spec.schema.get(c, Primitive.STRING) for c in columns}


def diff_rows(
    table: str,
    key_field: str,
    types: Mapping[str, FieldType],
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
        fields = key_field.split(",")  # a key of several fields: "a,b"
        key = key_text(fields, {f: row[f] if f in row else raw.get(f) for f in fields})
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


def _show(ftype: FieldType, v: Any) -> Any:
    return format_ms(v) if ftype == "timestamp" and isinstance(v, int) else v


def _printable(row: Mapping[str, Any], types: Mapping[str, FieldType]) -> dict[str, Any]:
    return {c: _show(t, row.get(c)) for c, t in types.items()}


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
    entries = list(read_ledger(ledger_dir))
    exp = expected_state(entries, tables)
    owned = key_prefixes(entries)
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
        if owned is not None:  # only the keys this ledger's generators wrote
            key = spec.record_keys[0]
            actual = [row for row in actual if str(row.get(key)).startswith(owned)]
        d = diff_rows(name, spec.record_key, types, exp.rows.get(et, {}), actual)
        print(d.summary(), file=out)
        for what, items in d.samples.items():
            for it in items:
                print(f"  {what}: {it}", file=out)
        diffs.append(d)
    return diffs
