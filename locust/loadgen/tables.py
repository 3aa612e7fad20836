"""Table declarations (spark/tables.yaml) as seen by the load generator.

The same file drives the Spark job; here it tells the generators which fields to
emit, the ledger how to validate a record and compute the expected table state,
and verify which columns to compare.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

FIELD_TYPES = frozenset({"string", "long", "double", "boolean", "timestamp"})
DEFAULT_MAX_RECORD_BYTES = 65536
TABLES_ENV = "LAKEHOUSE_TABLES"


@dataclass(frozen=True)
class TableSpec:
    """One `event_types` entry of tables.yaml."""

    event_type: str
    table: str
    schema: dict[str, str]
    record_key: str
    precombine: str
    partition_name: str | None = None
    partition_from: str | None = None
    op_field: str | None = None
    table_types: tuple[str, ...] = ("COPY_ON_WRITE", "MERGE_ON_READ")

    @property
    def columns(self) -> list[str]:
        """Declared schema columns, then the derived partition column if any."""
        cols = list(self.schema)
        if self.partition_name and self.partition_name not in cols:
            cols.append(self.partition_name)
        return cols


@dataclass(frozen=True)
class Tables:
    specs: dict[str, TableSpec]
    max_record_bytes: int = DEFAULT_MAX_RECORD_BYTES
    extra: dict[str, Any] = field(default_factory=dict)

    def __getitem__(self, event_type: str) -> TableSpec:
        return self.specs[event_type]

    def __contains__(self, event_type: object) -> bool:
        return event_type in self.specs

    @property
    def event_types(self) -> list[str]:
        return list(self.specs)


def default_tables_path() -> Path:
    """$LAKEHOUSE_TABLES, else spark/tables.yaml of this checkout."""
    env = os.environ.get(TABLES_ENV)
    if env:
        return Path(env)
    return Path(__file__).resolve().parents[2] / "spark" / "tables.yaml"


def parse_tables(doc: dict[str, Any]) -> Tables:
    defaults = doc.get("defaults") or {}
    specs: dict[str, TableSpec] = {}
    for name, entry in (doc.get("event_types") or {}).items():
        schema = {str(k): str(v) for k, v in entry["schema"].items()}
        bad = {k: v for k, v in schema.items() if v not in FIELD_TYPES}
        if bad:
            raise ValueError(f"{name}: unsupported field types {bad}")
        key, pre = entry["record_key"], entry["precombine"]
        if key not in schema or pre not in schema:
            raise ValueError(f"{name}: record_key/precombine must be schema fields")
        if schema[pre] != "timestamp":
            raise ValueError(f"{name}: precombine {pre} must be a timestamp")
        part = entry.get("partition_by") or {}
        specs[name] = TableSpec(
            event_type=name,
            table=entry["table"],
            schema=schema,
            record_key=key,
            precombine=pre,
            partition_name=part.get("name"),
            partition_from=part.get("from"),
            op_field=entry.get("op_field"),
            table_types=tuple(entry.get("table_types") or defaults.get("table_types") or ()),
        )
    return Tables(
        specs=specs,
        max_record_bytes=int(defaults.get("max_record_bytes", DEFAULT_MAX_RECORD_BYTES)),
    )


def load_tables(path: str | Path | None = None) -> Tables:
    p = Path(path) if path else default_tables_path()
    with p.open(encoding="utf-8") as f:
        return parse_tables(yaml.safe_load(f))
