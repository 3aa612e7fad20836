"""Record vectors shared by the streaming job's and the load generator's tests.

records.jsonl holds one case per line: the payload ("payload", text, or "payload_b64"
for bytes that are not UTF-8), whether it is valid, and for an invalid one a substring
of the job's quarantine reason and the ledger's malformed kind. Both components must
classify every case as listed, under src/lakehouse_tables/tables.yaml plus extra_tables.yaml.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from lakehouse_tables.declarations import TABLES_YAML, TableSpec, parse_tables

HERE = Path(__file__).resolve().parent
RECORDS = HERE / "records.jsonl"
EXTRA_TABLES = HERE / "extra_tables.yaml"


@dataclass(frozen=True)
class Vector:
    line: int
    data: bytes
    valid: bool
    reason_contains: str | None
    ledger_kind: str | None
    note: str

    @property
    def label(self) -> str:
        return f"line {self.line}: {self.note}"


def load_vectors(path: Path = RECORDS) -> list[Vector]:
    vectors = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        row: dict[str, Any] = json.loads(line)
        if "payload_b64" in row:
            data = base64.b64decode(row["payload_b64"])
        else:
            data = row["payload"].encode("utf-8")
        vectors.append(
            Vector(
                line=number,
                data=data,
                valid=row["valid"],
                reason_contains=row.get("reason_contains"),
                ledger_kind=row.get("ledger_kind"),
                note=row.get("note", ""),
            )
        )
    return vectors


def vector_specs() -> Mapping[str, TableSpec]:
    """The shipped declarations plus extra_tables.yaml's entries and defaults, validated by
    the declarations' parser."""
    document = yaml.safe_load(TABLES_YAML.read_text(encoding="utf-8"))
    extra = yaml.safe_load(EXTRA_TABLES.read_text(encoding="utf-8"))
    document["event_types"].update(extra["event_types"])
    document.setdefault("defaults", {}).update(extra.get("defaults", {}))
    return parse_tables(yaml.safe_dump(document, sort_keys=False), source="vector tables")
