"""Decimals, dates and nested values end to end (marker `local`): one run of the job on
an entry that declares them, read back through Trino from the live view, Copy-on-Write,
Merge-on-Read (`_ro`, after the final compaction) and the raw JSON table, compared with
what was sent in the ledger's canonical forms; values the types cannot hold exactly are
in the quarantine with their reasons. The records are the unit tests' (test_validate_types).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from loadgen import validation
from loadgen.ledger import normalize
from loadgen.verify import normalize_actual
from tests.support.pipeline import Run
from tests.unit.lakehouse_job.test_validate_types import QUARANTINED, TABLES, VALID, tables

pytestmark = pytest.mark.local

COLUMNS = ("amount", "due", "lines", "tags", "device")


def expected() -> dict[str, dict[str, object]]:
    spec = tables()["invoices"]
    rows = {}
    for text in VALID.values():
        sent = validation.parse_object(text)
        assert sent is not None
        rows[sent["invoice_id"]] = {c: normalize(spec.schema[c], sent.get(c)) for c in COLUMNS}
    return rows


def read(run: Run, sql_from: str, catalog: str) -> dict[str, dict[str, object]]:
    spec = tables()["invoices"]
    rows = run.query(f"SELECT invoice_id, {', '.join(COLUMNS)} {sql_from}", catalog=catalog)
    return {
        row[0]: {
            c: normalize_actual(spec.schema[c], v) for c, v in zip(COLUMNS, row[1:], strict=True)
        }
        for row in rows
    }


def test_decimals_dates_and_nested_values_read_back_exactly(run: Run, tmp_path: Path) -> None:
    tables_file = tmp_path / "tables.yaml"
    tables_file.write_text(TABLES)
    records = [*VALID.values(), *(text for text, _ in QUARANTINED.values())]
    run.put([text.encode() for text in records])
    run.run_job(
        "--available-now",
        "--final-compaction",
        *("--tables", str(tables_file), "--trino-url", run.settings.trino_url),
    )

    want = expected()
    db = run.database
    assert read(run, "FROM invoices", "hive") == want, "live view"
    assert read(run, f"FROM hudi.{db}.invoices_cow", "hudi") == want, "CoW"
    assert read(run, f"FROM hudi.{db}.invoices_mor_ro", "hudi") == want, "MoR _ro"
    raw = read(run, "FROM invoices_json", "hive")
    assert raw == want, "the raw JSON table reads the declared types too"

    quarantined = {
        json.loads(payload)["invoice_id"]: reason
        for payload, reason in run.query("SELECT raw_payload, reason FROM quarantine")
    }
    assert quarantined == {
        json.loads(text)["invoice_id"]: reason for text, reason in QUARANTINED.values()
    }
