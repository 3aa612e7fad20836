"""The ledger and its expected final table state."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from lakehouse_tables.declarations import Tables, load_tables
from loadgen.kinesis import PutResult
from loadgen.ledger import LedgerWriter, classify, expected_state, read_ledger
from loadgen.models import Record
from loadgen.timefmt import parse_iso_ms

pytestmark = pytest.mark.unit


@pytest.fixture(scope="module")
def tables() -> Tables:
    return load_tables()


def order(op: str, oid: str, ts: str, amount: float | None = 10.0, status: str = "paid") -> bytes:
    ev: dict[str, Any] = {"event_type": "orders", "op": op, "order_id": oid}
    if op == "d":
        ev.update(customer_id=None, amount=None, status=None)
    else:
        ev.update(customer_id="c1", amount=amount, status=status)
    ev["order_ts"] = ts
    return json.dumps(ev).encode()


def entry(data: bytes, acked: bool = True, dup: bool = False) -> dict[str, Any]:
    return {
        "acked": acked,
        "dup": dup,
        "data": data.decode(),
        "shard_id": "s",
        "sequence_number": "1",
    }


def ts(sec: int, ms: int = 0) -> str:
    return f"2026-11-22T19:00:{sec:02d}.{ms:03d}Z"


def test_latest_event_time_wins_whatever_the_send_order(tables: Tables) -> None:
    sent = [
        order("c", "o1", ts(1), 1.0, "created"),
        order("u", "o1", ts(3), 3.0),  # latest
        order("u", "o1", ts(2), 2.0),  # arrives late, older: ignored
    ]
    st = expected_state([entry(d) for d in sent], tables)
    row = st.rows["orders"]["o1"]
    assert row["amount"] == 3.0
    assert row["order_ts"] == parse_iso_ms(ts(3))
    assert row["partition_date"] == "2026-11-22"
    assert st.counts["superseded"] == 1


def test_millisecond_precision_decides(tables: Tables) -> None:
    sent = [order("u", "o1", ts(5, 2), 2.0), order("u", "o1", ts(5, 1), 1.0)]
    assert expected_state([entry(d) for d in sent], tables).rows["orders"]["o1"]["amount"] == 2.0


def test_delete_before_older_update_in_send_order_still_wins(tables: Tables) -> None:
    sent = [
        order("c", "o1", ts(1)),
        order("d", "o1", ts(4)),  # the delete arrives first...
        order("u", "o1", ts(3)),  # ...then an older update: must not resurrect the key
        order("c", "o2", ts(1)),
        order("u", "o2", ts(2)),
        order("d", "o2", ts(1, 500)),  # an older delete arriving late does not delete
    ]
    st = expected_state([entry(d) for d in sent], tables)
    assert "o1" not in st.rows["orders"]
    assert st.rows["orders"]["o2"]["order_ts"] == parse_iso_ms(ts(2))
    assert st.deleted["orders"] == 1


def test_recreate_after_delete(tables: Tables) -> None:
    sent = [order("c", "o1", ts(1)), order("d", "o1", ts(2)), order("c", "o1", ts(3), 7.0)]
    assert expected_state([entry(d) for d in sent], tables).rows["orders"]["o1"]["amount"] == 7.0


def test_duplicates_unacked_and_malformed(tables: Tables) -> None:
    d1 = order("c", "o1", ts(1), 1.0)
    d2 = order("u", "o1", ts(2), 2.0)
    entries = [
        entry(d1),
        entry(d2),
        entry(d2, dup=True),  # exact resend
        entry(d1, dup=True),  # exact resend of an older event, arriving last
        entry(order("u", "o1", ts(9), 9.0), acked=False),  # never acknowledged
        entry(b"not json"),
        entry(json.dumps({"event_type": "orders", "op": "u", "order_ts": ts(1)}).encode()),
        entry(order("u", "o3", ts(1), amount=None).replace(b"null", b'"x"', 1)),
    ]
    st = expected_state(entries, tables)
    assert st.rows["orders"] == {
        "o1": {
            "order_id": "o1",
            "customer_id": "c1",
            "amount": 2.0,
            "status": "paid",
            "order_ts": parse_iso_ms(ts(2)),
            "items": None,  # not sent: NULL
            "partition_date": "2026-11-22",
        }
    }
    assert st.counts["unacked"] == 1
    assert st.counts["duplicates"] == 2
    assert st.malformed == {"not_json": 1, "missing_key": 1, "wrong_types": 1}


def test_late_event_across_midnight_gets_its_own_partition_date(tables: Tables) -> None:
    ev = {"event_type": "ticker", "event_id": "e1", "ticker": "X", "price": 1.5,
          "event_time": "2026-11-21T23:59:59.999Z"}  # fmt: skip
    st = expected_state([entry(json.dumps(ev).encode())], tables)
    assert st.rows["ticker"]["e1"]["event_date"] == "2026-11-21"


@pytest.mark.parametrize(
    ("payload", "kind"),
    [
        (b"[1, 2]", "not_json"),
        (b"\xff\xfe", "not_utf8"),
        (b'{"event_type": "nope"}', "unknown_event_type"),
        (b'{"order_id": "o"}', "unknown_event_type"),
        (b'{"event_type": "orders", "op": "c", "order_id": "o"}', "missing_time"),
        (b'{"event_type": "orders", "op": "c", "order_id": "o", "order_ts": "2026-11-22"}',
         "invalid_time"),
        (b'{"event_type": "orders", "op": "c", "order_id": "o", "order_ts": 1795374000}',
         "invalid_time"),
        (b'{"event_type": "orders", "op": "x", "order_id": "o", '
         b'"order_ts": "2026-11-22T19:00:00.000Z"}', "invalid_op"),
        (b'{"event_type": "orders", "op": "c", "order_id": 5, '
         b'"order_ts": "2026-11-22T19:00:00.000Z"}', "wrong_types"),
        (b'{"event_type": "iot", "event_id": "e", "temperature": true, '
         b'"event_time": "2026-11-22T19:00:00.000Z"}', "wrong_types"),
        (b'{"event_type": "iot", "event_id": "e", "temperature": 3, '
         b'"event_time": "2026-11-22T19:00:00.000Z"}', "valid"),
    ],
)  # fmt: skip
def test_classify(tables: Tables, payload: bytes, kind: str) -> None:
    assert classify(payload, tables)[0] == kind


def test_oversize_is_malformed(tables: Tables) -> None:
    ev = json.loads(order("c", "o1", ts(1)))
    ev["padding"] = "x" * tables.max_record_bytes
    assert classify(json.dumps(ev).encode(), tables)[0] == "oversize"


def test_writer_round_trip(tmp_path: Path, tables: Tables) -> None:
    w = LedgerWriter(tmp_path / "ledger-x-w0-1.jsonl", flush_every=1)
    data = order("c", "o1", ts(1))
    rec = Record(data, "o1", "orders", "valid", 1)
    w.write("g", rec, PutResult("shardId-1", "49", attempts=1))
    w.write("g", Record(b"\xff", "bad-1", None, "not_json", 2), PutResult(error_code="X"))
    w.close()
    (tmp_path / "ledger-x-w1-2.jsonl").write_text('{"acked": true, "data": "torn')  # no newline
    rows = list(read_ledger(tmp_path))
    assert len(rows) == 2
    assert (
        rows[0]["acked"] and rows[0]["sequence_number"] == "49" and rows[0]["data"] == data.decode()
    )
    assert not rows[1]["acked"] and rows[1]["data_b64"] == "/w=="
    assert expected_state(rows, tables).rows["orders"]["o1"]["amount"] == 10.0


def test_expected_rows_are_normalised_as_the_job_writes_them(tables: Tables) -> None:
    # 01:30:00.1239+02:00 is 23:30:00.1239Z the day before: the row holds UTC epoch ms
    # (floored) and the partition is the UTC date, not the local one.
    ev = json.loads(order("U", "o1", "2026-11-23T01:30:00.1239+02:00"))
    ev["status"] = "bad \ud800 surrogate"
    st = expected_state([entry(json.dumps(ev).encode())], tables)
    row = st.rows["orders"]["o1"]
    assert row["order_ts"] == parse_iso_ms("2026-11-22T23:30:00.123Z")
    assert row["partition_date"] == "2026-11-22"
    assert row["status"] == "bad ? surrogate"  # what the job's UTF-8 encoding stores


def test_op_is_trimmed_and_lower_cased_and_missing_op_is_an_upsert(tables: Tables) -> None:
    sent = [order("c", "o1", ts(1)), order(" D ", "o1", ts(2)), order("c", "o2", ts(1))]
    no_op = json.loads(order("c", "o3", ts(1)))
    del no_op["op"]
    st = expected_state([entry(d) for d in [*sent, json.dumps(no_op).encode()]], tables)
    assert set(st.rows["orders"]) == {"o2", "o3"}
    assert st.deleted["orders"] == 1


def test_precombine_compares_microseconds(tables: Tables) -> None:
    # Same millisecond: the job (and Hudi) still order them by the microseconds.
    sent = [order("u", "o1", "2026-11-22T19:00:00.000200Z", 2.0),
            order("u", "o1", "2026-11-22T19:00:00.000100Z", 1.0)]  # fmt: skip
    st = expected_state([entry(d) for d in sent], tables)
    assert st.rows["orders"]["o1"]["amount"] == 2.0
    assert st.counts["ties"] == 0


def test_equal_event_times_go_to_the_later_stream_position(tables: Tables) -> None:
    first = {**entry(order("u", "o1", ts(1), 1.0)), "sequence_number": "9"}
    later = {**entry(order("u", "o1", ts(1), 2.0)), "sequence_number": "10"}
    for sent in ([first, later], [later, first]):  # whatever order the ledger lists them in
        st = expected_state(sent, tables)
        assert st.rows["orders"]["o1"]["amount"] == 2.0  # 10 > 9 numerically, not as text
        assert st.counts["ties"] == 1


def test_loadgen_does_not_import_pyspark() -> None:
    # The Locust image has no pyspark; the table declarations come from lakehouse_job.tables.
    code = (
        "import sys, loadgen.ledger, loadgen.models, loadgen.verify, loadgen.validation;"
        "assert not [m for m in sys.modules if m.startswith('pyspark')], 'pyspark imported'"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=Path(__file__).parents[2])
