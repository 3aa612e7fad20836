"""spark/tables.yaml as the load generator sees it: a thin view over the job's parser.

The declarations are read and validated by lakehouse_job.tables (pure Python, no pyspark),
so the generators, the ledger and verify see exactly the specs the streaming job uses.
This module only adds what the load generator needs on top: the default file (overridable
with $LAKEHOUSE_TABLES), the overall record size limit and the compared columns.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from lakehouse_job import tables as job_tables
from lakehouse_job.tables import TablesConfigError, TableSpec

__all__ = [
    "TABLES_ENV",
    "TableSpec",
    "Tables",
    "TablesConfigError",
    "compared_columns",
    "load_tables",
]

TABLES_ENV: Final = "LAKEHOUSE_TABLES"


@dataclass(frozen=True)
class Tables:
    """event_type -> TableSpec, in tables.yaml order."""

    specs: Mapping[str, TableSpec]

    def __getitem__(self, event_type: str) -> TableSpec:
        return self.specs[event_type]

    def __contains__(self, event_type: object) -> bool:
        return event_type in self.specs

    @property
    def event_types(self) -> list[str]:
        return list(self.specs)

    @property
    def max_record_bytes(self) -> int:
        """The largest limit of any entry: bigger records are rejected whatever their type
        (record rule 2); an entry's own, smaller limit applies after its type is known."""
        return max(spec.max_record_bytes for spec in self.specs.values())


def compared_columns(spec: TableSpec) -> list[str]:
    """Declared schema columns, then the derived partition column: what verify compares."""
    return [*spec.schema, spec.partition_name]


def default_tables_path() -> Path:
    """$LAKEHOUSE_TABLES, else the spark/tables.yaml the job reads by default."""
    env = os.environ.get(TABLES_ENV)
    return Path(env) if env else job_tables.TABLES_YAML


def load_tables(path: str | Path | None = None) -> Tables:
    """Read and validate tables.yaml (raises TablesConfigError, naming file and entry)."""
    return Tables(job_tables.load_tables(path or default_tables_path()))
