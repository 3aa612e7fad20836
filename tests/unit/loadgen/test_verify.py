"""verify: the pure comparison of expected and actual rows."""

from __future__ import annotations

import io
import json
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import pytest

from lakehouse_tables.declarations import FieldType, Tables, compared_columns, load_tables
from loadgen.ledger import expected_state
from loadgen.timefmt import parse_iso_ms
from loadgen.verify import column_types, diff_rows, verify_tables
from tests.support.stream import compare_stream

pytestmark = pytest.mark.unit


@pytest.fixture(scope="module")
def tables() -> Tables:
    return load_tables()


def exp_row(oid: str, amount: float, t: str) -> dict[str, Any]:
    return {"order_id": oid, "customer_id": "c", "amount": amount, "status": "paid",
            "order_ts": parse_iso_ms(t), "partition_date": t[:10]}  # fmt: skip


def act_row(oid: str, amount: float, t: datetime) -> dict[str, Any]:
    return {"order_id": oid, "customer_id": "c", "amount": amount, "status": "paid",
            "order_ts": t, "partition_date": t.date().isoformat()}  # fmt: skip


def types(tables: Tables) -> dict[str, FieldType]:
    spec = tables["orders"]
    return column_types(spec, compared_columns(spec))


def test_all_categories(tables: Tables) -> None:
    expected = {
        "o1": exp_row("o1", 1.0, "2026-11-22T19:00:00.123Z"),
        "o2": exp_row("o2", 2.0, "2026-11-22T19:00:01.000Z"),
        "o3": exp_row("o3", 3.0, "2026-11-22T19:00:02.000Z"),
        "o4": exp_row("o4", 4.0, "2026-11-22T19:00:03.000Z"),
    }
    actual = [
        # microseconds beyond the millisecond are ignored; naive datetimes are UTC
        act_row("o1", 1.0, datetime(2026, 11, 22, 19, 0, 0, 123456)),
        # older version still visible: stale
        act_row("o2", 1.5, datetime(2026, 11, 22, 19, 0, 0, 500000)),
        # aware datetime, other time zone, same instant
        act_row("o3", 3.0, datetime(2026, 11, 22, 19, 0, 2, tzinfo=UTC).astimezone()),
        act_row("o9", 9.0, datetime(2026, 11, 22, 19, 0, 9)),  # deleted key still there: extra
        act_row("o9", 9.0, datetime(2026, 11, 22, 19, 0, 9)),  # and twice
    ]
    d = diff_rows("hudi_orders_cow", "order_id", types(tables), expected, actual)
    assert (d.matched, d.missing, d.extra, d.stale, d.duplicate_keys) == (2, 1, 1, 1, 1)
    assert d.samples["missing"] == ["o4"]
    assert d.samples["stale"][0]["key"] == "o2"
    assert not d.ok
    assert "missing=1" in d.summary()


def test_match_with_strings_and_dates(tables: Tables) -> None:
    expected = {"o1": exp_row("o1", 0.1 + 0.2, "2026-11-21T23:59:59.999Z")}
    actual = [
        {
            "order_id": "o1",
            "customer_id": "c",
            "amount": 0.3,
            "status": "paid",
            "order_ts": "2026-11-21 23:59:59.999000",
            "partition_date": date(2026, 11, 21),
        }
    ]
    d = diff_rows("t", "order_id", types(tables), expected, actual)
    assert d.ok and d.matched == 1


def test_millisecond_difference_is_stale(tables: Tables) -> None:
    expected = {"o1": exp_row("o1", 1.0, "2026-11-22T19:00:00.123Z")}
    actual = [act_row("o1", 1.0, datetime(2026, 11, 22, 19, 0, 0, 124000))]
    assert diff_rows("t", "order_id", types(tables), expected, actual).stale == 1


def test_empty_both_is_ok(tables: Tables) -> None:
    assert diff_rows("t", "order_id", types(tables), {}, []).ok


def test_compare_stream() -> None:
    ledger: list[dict[str, Any]] = [
        {"acked": True, "shard_id": "s0", "sequence_number": "1", "data": "a"},
        {"acked": True, "shard_id": "s1", "sequence_number": "1", "data": "b"},
        {"acked": True, "shard_id": "s1", "sequence_number": "2", "data": "c"},
        {"acked": False, "shard_id": None, "sequence_number": None, "data": "d"},
    ]
    ok = compare_stream([("s0", "1", b"a"), ("s1", "1", b"b"), ("s1", "2", b"c")], ledger)
    assert ok.ok and ok.matched == 3
    bad = compare_stream([("s0", "1", b"a"), ("s1", "1", b"X"), ("s1", "3", b"d")], ledger)
    assert (bad.matched, bad.data_mismatch, bad.not_in_ledger, bad.missing_on_stream) == (
        1,
        1,
        1,
        1,
    )


class FakeCursor:
    def __init__(self, rows: list[tuple[Any, ...]], log: list[str]) -> None:
        self.rows, self.log = rows, log

    def execute(self, sql: str) -> None:
        self.log.append(sql)

    def fetchall(self) -> list[tuple[Any, ...]]:
        return self.rows


class FakeConn:
    def __init__(self, rows: list[tuple[Any, ...]]) -> None:
        self.rows, self.sql = rows, []  # type: ignore[var-annotated]

    def cursor(self) -> FakeCursor:
        return FakeCursor(self.rows, self.sql)


def test_verify_tables_end_to_end_without_trino(tmp_path: Path, tables: Tables) -> None:
    ev = {"event_type": "orders", "op": "c", "order_id": "o1", "customer_id": "c",
          "amount": 5.0, "status": "created", "order_ts": "2026-11-22T19:00:00.000Z"}  # fmt: skip
    line = {"acked": True, "dup": False, "shard_id": "s", "sequence_number": "1",
            "data": json.dumps(ev)}  # fmt: skip
    (tmp_path / "ledger-a-w0-1.jsonl").write_text(json.dumps(line) + "\n")
    row = ("o1", "c", 5.0, "created", datetime(2026, 11, 22, 19), None, "2026-11-22")
    conn = FakeConn([row])
    out = io.StringIO()
    diffs = verify_tables(tables, str(tmp_path), conn, "hudi", "default",
                          where="_hoodie_is_deleted = false", out=out)  # fmt: skip
    assert [d.ok for d in diffs] == [True]
    assert conn.sql == [
        'SELECT "order_id", "customer_id", "amount", "status", "order_ts", "items", '
        '"partition_date" '
        'FROM "hudi"."default"."hudi_orders_cow" WHERE _hoodie_is_deleted = false'
    ]
    assert "hudi_orders_cow" in out.getvalue()
    assert expected_state([line], tables).rows["orders"]["o1"]["status"] == "created"


def test_a_ledger_speaks_for_its_own_generators_keys_only(tmp_path: Path, tables: Tables) -> None:
    """Rows another producer wrote (a notebook's `qs1-...` keys) are not extra; a row in
    the ledger's own key space that it never sent still is."""
    ev = {"event_type": "orders", "op": "c", "order_id": "r1-w0-u0-ord-1", "customer_id": "c",
          "amount": 5.0, "status": "created", "order_ts": "2026-11-22T19:00:00.000Z"}  # fmt: skip
    line = {"gen": "r1-w0-u0", "acked": True, "dup": False, "shard_id": "s",
            "sequence_number": "1", "data": json.dumps(ev)}  # fmt: skip
    (tmp_path / "ledger-r1-w0-1.jsonl").write_text(json.dumps(line) + "\n")
    when = datetime(2026, 11, 22, 19)
    mine = ("r1-w0-u0-ord-1", "c", 5.0, "created", when, None, "2026-11-22")
    notebook = ("qs1-ord-7", "c", 1.0, "created", when, None, "2026-11-22")
    diffs = verify_tables(tables, str(tmp_path), FakeConn([mine, notebook]), "hudi", "default",
                          event_types=["orders"], out=io.StringIO())  # fmt: skip
    assert diffs[0].ok and diffs[0].actual == 1
    ghost = ("r1-w0-u0-ord-2", "c", 1.0, "created", when, None, "2026-11-22")
    diffs = verify_tables(tables, str(tmp_path), FakeConn([mine, ghost]), "hudi", "default",
                          event_types=["orders"], out=io.StringIO())  # fmt: skip
    assert not diffs[0].ok and diffs[0].extra == 1


def test_a_key_of_several_fields_tells_rows_apart(tables: Tables) -> None:
    # Two rows of one order_id with other customer_ids: two keys, not a duplicate.
    expected = {
        "order_id:o1,customer_id:a": {
            **exp_row("o1", 1.0, "2026-11-22T19:00:00.000Z"),
            "customer_id": "a",
        },
        "order_id:o1,customer_id:b": {
            **exp_row("o1", 2.0, "2026-11-22T19:00:00.000Z"),
            "customer_id": "b",
        },
    }
    actual = [
        {**act_row("o1", 1.0, datetime(2026, 11, 22, 19)), "customer_id": "a"},
        {**act_row("o1", 2.0, datetime(2026, 11, 22, 19)), "customer_id": "b"},
        {**act_row("o1", 2.0, datetime(2026, 11, 22, 19)), "customer_id": "b"},
    ]
    d = diff_rows("t", "order_id,customer_id", types(tables), expected, actual)
    assert (d.matched, d.missing, d.extra, d.duplicate_keys) == (2, 0, 0, 1)
