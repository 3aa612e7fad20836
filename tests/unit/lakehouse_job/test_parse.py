"""Splitting a Kinesis micro-batch into typed rows and a quarantine (lakehouse_job.parse).

One batch holds every case; it is classified and collected once per module, and each
test looks up its records by sequence number.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import pytest
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import TimestampType

from lakehouse_job.parse import _Outputs, split_batch
from lakehouse_job.spark_schema import KINESIS_SCHEMA, QUARANTINE_SCHEMA, valid_row_type
from lakehouse_tables import columns
from lakehouse_tables.declarations import TABLES_YAML, TableSpec, load_tables, parse_tables

pytestmark = pytest.mark.unit

SHARD = "shardId-000000000000"
ARRIVAL = datetime(2026, 11, 22, 19, 0, 5, tzinfo=UTC)
Payload = bytes | str | dict[str, Any] | None


def kinesis_rows(
    spark: SparkSession, payloads: Mapping[int, Payload], shard: str = SHARD
) -> DataFrame:
    """Kinesis source rows; the key becomes the sequence number, dicts are JSON-encoded."""

    def encode(payload: Payload) -> bytearray | None:
        if payload is None:
            return None
        if isinstance(payload, dict):
            payload = json.dumps(payload)
        if isinstance(payload, str):
            payload = payload.encode("utf-8")
        return bytearray(payload)

    rows = [
        (encode(p), "events", "pk", shard, str(seq), ARRIVAL, None, None)
        for seq, p in payloads.items()
    ]
    return spark.createDataFrame(rows, KINESIS_SCHEMA)


def collect_by_seq(df: DataFrame, seq_column: str) -> dict[int, dict[str, Any]]:
    """Rows keyed by sequence number; timestamps as epoch micros (no local-zone guessing)."""
    micros = [
        F.unix_micros(F.col(f.name)).alias(f.name)
        if isinstance(f.dataType, TimestampType)
        else F.col(f.name)
        for f in df.schema.fields
    ]
    return {int(row[seq_column]): row.asDict() for row in df.select(*micros).collect()}


def micros(iso: str) -> int:
    return int(datetime.fromisoformat(iso).timestamp() * 1_000_000)


def order(seq: int, **overrides: Any) -> dict[str, Any]:
    event: dict[str, Any] = {
        "event_type": "orders",
        "order_id": f"o-{seq}",
        "customer_id": "c-1",
        "amount": 12.5,
        "status": "created",
        "order_ts": "2026-11-22T19:00:00.123Z",
    }
    event.update(overrides)
    return {k: v for k, v in event.items() if v is not _ABSENT}


_ABSENT = object()

TOO_BIG = json.dumps(order(0, padding="x" * 65536)).encode()

# sequence number -> (payload, expected reason)
QUARANTINED: dict[int, tuple[Payload, str]] = {
    100: (b"", "empty record"),
    101: (None, "empty record"),
    102: (TOO_BIG, "record larger than 65536 bytes"),
    103: (b'{"event_type":"orders","status":"caf\xe9"}', "not UTF-8 (raw_payload is base64)"),
    104: ("garbage", "not JSON"),
    105: ('{"event_type":"orders",', "not JSON"),
    106: ("{'event_type':'orders'}", "not JSON"),
    107: ("   ", "not JSON"),
    108: ("[1, 2]", "not a JSON object"),
    109: ('"orders"', "not a JSON object"),
    110: ("null", "not a JSON object"),
    111: ({"order_id": "o-1"}, "missing event_type"),
    112: ({"event_type": ""}, "missing event_type"),
    113: ({"event_type": None}, "missing event_type"),
    114: ({"event_type": "refunds"}, "unknown event_type 'refunds'"),
    115: ({"event_type": "Orders"}, "unknown event_type 'Orders'"),
    116: (order(116, order_id=_ABSENT), "missing record key order_id"),
    117: (order(117, order_id=""), "missing record key order_id"),
    118: (order(118, order_id=None), "missing record key order_id"),
    119: (order(119, order_ts=_ABSENT), "missing event time order_ts"),
    120: (order(120, order_ts=None), "missing event time order_ts"),
    121: (order(121, order_ts="2026-11-22 19:00:00"), "invalid timestamp in order_ts"),
    122: (order(122, order_ts="2026-11-22"), "invalid timestamp in order_ts"),
    123: (order(123, order_ts="2026-02-30T19:00:00.000Z"), "invalid timestamp in order_ts"),
    124: (order(124, order_ts="2026-11-22T19:00:00.123"), "invalid timestamp in order_ts"),
    125: (order(125, order_ts=1795374000), "invalid timestamp in order_ts"),
    126: (order(126, order_ts="2026-11-22T25:00:00Z"), "invalid timestamp in order_ts"),
    127: (order(127, amount="abc"), "wrong type for amount: expected double"),
    128: (order(128, amount="12.5"), "wrong type for amount: expected double"),
    129: (order(129, amount="NaN"), "wrong type for amount: expected double"),
    130: (order(130, amount=True), "wrong type for amount: expected double"),
    131: (order(131, amount=[1]), "wrong type for amount: expected double"),
    132: (order(132, amount="null"), "wrong type for amount: expected double"),
    133: ('{"event_type":"orders","order_id":"o","order_ts":"2026-11-22T19:00:00Z","amount":1e400}',
          "number out of range for amount"),
    134: (order(134, op="x"), "invalid op 'x'"),
    135: (order(135, op=""), "invalid op ''"),
    136: (order(136, op="delete"), "invalid op 'delete'"),
    137: ({"event_type": "ticker", "event_id": "t", "ticker": "ACME", "price": 1.0,
           "event_time": "yesterday"}, "invalid timestamp in event_time"),
    138: ({"event_type": "clicks", "user_id": "u", "event_time": "2026-11-22T19:00:00Z"},
          "missing record key event_id"),
    139: ({"event_type": "iot", "event_id": "i", "device_id": "d", "temperature": 20.5,
           "humidity": "high", "event_time": "2026-11-22T19:00:00Z"},
          "wrong type for humidity: expected double"),
    # More than one problem: the first check in the documented order names it.
    140: (order(140, order_id=_ABSENT, amount="abc", op="x"), "missing record key order_id"),
    # String fields hold JSON strings only (other values are not kept as their JSON text).
    141: (order(141, customer_id=42), "wrong type for customer_id: expected string"),
    142: (order(142, order_id={"id": "o"}), "wrong type for order_id: expected string"),
    143: (order(143, status=["paid"]), "wrong type for status: expected string"),
    144: (order(144, status=False), "wrong type for status: expected string"),
    145: ('{"event_type":"orders","order_id":"o","order_ts":"2026-11-22T19:00:00Z","status":1e400}',
          "wrong type for status: expected string"),
    146: ('{"event_type":"orders","order_id":"o","order_ts":"2026-11-22T19:00:00Z"} x',
          "not JSON: data after the object, or nested deeper than 999 levels"),
    147: ('{"event_type":"orders","order_id":"o","order_id":"p","order_ts":"2026-11-22T19:00:00Z"}',
          "duplicate key 'order_id'"),
}  # fmt: skip

# sequence number -> payload of records that must come out valid
VALID: dict[int, Payload] = {
    1: order(1, op="c", order_ts="2026-11-22T23:59:59.999Z"),
    2: order(2, op="u", order_ts="2026-11-23T00:00:00.000Z"),
    3: order(3, op="d", order_ts="2026-11-23T00:00:00.001Z"),
    4: order(4),  # no op: an upsert
    5: order(5, op=None),
    6: order(6, op=" D "),
    # An offset is honoured: 01:30+02:00 is 23:30 UTC the day before.
    7: order(7, order_ts="2026-11-23T01:30:00+02:00"),
    8: order(8, order_ts="2026-11-22T19:00:00Z"),
    9: order(9, order_ts="2026-11-22T19:00:00.123456Z"),
    # Unknown fields are ignored; optional fields may be absent or null; JSON ints are doubles.
    10: order(10, amount=7, customer_id=_ABSENT, status=None, coupon={"code": "X"}),
    # A delete may carry only the key, the event time and the op.
    11: {"event_type": "orders", "order_id": "o-11", "order_ts": "2026-11-22T19:00:00Z", "op": "d"},
    20: {"event_type": "ticker", "event_id": "t-20", "ticker": "ACME", "price": 101.25,
         "event_time": "2026-11-22T19:00:00.500Z"},
    21: {"event_type": "clicks", "event_id": "k-21", "user_id": "u-1", "session_id": "s-1",
         "page": "/cart", "action": "view", "event_time": "2026-11-22T00:00:00Z"},
    22: {"event_type": "iot", "event_id": "i-22", "device_id": "d-1", "temperature": -3.5,
         "humidity": 0.61, "event_time": "2026-11-21T23:59:59.999999Z"},
    23: f'\n {json.dumps(order(23, status="déjà vu ✓"))} \n',
    # Strings that look like other JSON values are still strings.
    24: order(24, customer_id="42", status="true", order_id="[1]"),
    25: order(25, customer_id='{"a": 1}', status="-1e400", order_id='"Infinity"'),
}  # fmt: skip


@dataclass(frozen=True)
class Collected:
    inputs: int
    valid: dict[str, dict[int, dict[str, Any]]]
    raw: dict[str, dict[int, dict[str, Any]]]
    quarantine: dict[int, dict[str, Any]]
    valid_schemas: dict[str, Any]
    quarantine_schema: Any


@pytest.fixture(scope="module")
def specs() -> Mapping[str, TableSpec]:
    return load_tables(TABLES_YAML)


@pytest.fixture(scope="module")
def collected(spark: SparkSession, specs: Mapping[str, TableSpec]) -> Collected:
    payloads: dict[int, Payload] = {**VALID, **{s: p for s, (p, _) in QUARANTINED.items()}}
    batch = kinesis_rows(spark, payloads)
    split = split_batch(batch, specs)
    split.classified.persist()
    try:
        return Collected(
            inputs=batch.count(),
            valid={
                name: collect_by_seq(df, columns.INGEST_SEQ) for name, df in split.valid.items()
            },
            raw={name: collect_by_seq(df, columns.INGEST_SEQ) for name, df in split.raw.items()},
            quarantine=collect_by_seq(split.quarantine, columns.Q_SEQUENCE_NUMBER),
            valid_schemas={name: df.schema for name, df in split.valid.items()},
            quarantine_schema=split.quarantine.schema,
        )
    finally:
        split.classified.unpersist()


def test_every_record_lands_in_exactly_one_output(collected: Collected) -> None:
    seqs = [seq for rows in collected.valid.values() for seq in rows]
    seqs += list(collected.quarantine)

    assert len(seqs) == collected.inputs == len(VALID) + len(QUARANTINED)
    assert sorted(seqs) == sorted([*VALID, *QUARANTINED])


@pytest.mark.parametrize("seq", sorted(QUARANTINED))
def test_quarantine_reason(collected: Collected, seq: int) -> None:
    assert collected.quarantine[seq]["reason"] == QUARANTINED[seq][1]


def test_quarantine_keeps_payload_and_position(collected: Collected) -> None:
    row = collected.quarantine[114]

    assert json.loads(row["raw_payload"]) == {"event_type": "refunds"}
    assert row["event_type"] == "refunds"
    assert row["shard_id"] == SHARD
    assert row["sequence_number"] == "114"
    assert row["arrival_ts"] == int(ARRIVAL.timestamp() * 1_000_000)
    assert row["quarantined_at"] is not None
    # Records rejected before their event_type is read have none.
    assert collected.quarantine[104]["event_type"] is None
    assert collected.quarantine[102]["raw_payload"] == TOO_BIG.decode()


def test_quarantine_payload_of_invalid_utf8_is_exact_base64(collected: Collected) -> None:
    raw = base64.b64decode(collected.quarantine[103]["raw_payload"])

    assert raw == QUARANTINED[103][0]


def test_quarantine_empty_payloads(collected: Collected) -> None:
    assert collected.quarantine[100]["raw_payload"] == ""
    assert collected.quarantine[101]["raw_payload"] is None


def test_quarantine_schema(collected: Collected) -> None:
    assert collected.quarantine_schema.fieldNames() == list(columns.QUARANTINE_COLUMNS)
    assert [f.dataType for f in collected.quarantine_schema] == [
        f.dataType for f in QUARANTINE_SCHEMA
    ]


def test_valid_rows_have_the_declared_schema(
    collected: Collected, specs: Mapping[str, TableSpec]
) -> None:
    for name, spec in specs.items():
        schema = collected.valid_schemas[name]
        assert schema.fieldNames() == valid_row_type(spec).fieldNames()
        assert [f.dataType for f in schema] == [f.dataType for f in valid_row_type(spec)]


def test_the_raw_copy_is_the_valid_rows_with_their_original_text(
    collected: Collected,
) -> None:
    for name, rows in collected.valid.items():
        raw = collected.raw[name]
        assert raw.keys() == rows.keys()
        for seq, row in rows.items():
            assert {k: v for k, v in raw[seq].items() if k != columns.RAW_PAYLOAD} == row
            original = VALID[seq]
            if isinstance(original, dict):
                original = json.dumps(original)  # as kinesis_rows sends it
            if isinstance(original, bytes):
                original = original.decode()
            assert raw[seq][columns.RAW_PAYLOAD] == original


def test_valid_order_is_typed(collected: Collected) -> None:
    row = collected.valid["orders"][1]

    assert row == {
        "order_id": "o-1",
        "customer_id": "c-1",
        "amount": 12.5,
        "status": "created",
        "order_ts": micros("2026-11-22T23:59:59.999+00:00"),
        "items": None,
        "partition_date": "2026-11-22",
        "_op": "c",
        "_is_deleted": False,
        "_ingest_shard": SHARD,
        "_ingest_seq": "1",
        "_ingest_subseq": None,
        "_arrival_ts": int(ARRIVAL.timestamp() * 1_000_000),
    }


@pytest.mark.parametrize(
    ("event_type", "seq", "expected"),
    [
        (
            "ticker",
            20,
            {"event_id": "t-20", "ticker": "ACME", "price": 101.25, "event_date": "2026-11-22"},
        ),
        (
            "clicks",
            21,
            {"event_id": "k-21", "page": "/cart", "action": "view", "event_date": "2026-11-22"},
        ),
        (
            "iot",
            22,
            {"device_id": "d-1", "temperature": -3.5, "humidity": 0.61, "event_date": "2026-11-21"},
        ),
    ],
)
def test_valid_rows_of_every_event_type(
    collected: Collected, event_type: str, seq: int, expected: dict[str, Any]
) -> None:
    row = collected.valid[event_type][seq]

    assert {k: row[k] for k in expected} == expected
    event = VALID[seq]
    assert isinstance(event, dict)
    assert row["event_time"] == micros(event["event_time"].replace("Z", "+00:00"))
    assert (row["_op"], row["_is_deleted"]) == ("u", False)


@pytest.mark.parametrize(
    ("seq", "day"),
    [
        (1, "2026-11-22"),  # 23:59:59.999Z
        (2, "2026-11-23"),  # 00:00:00.000Z
        (3, "2026-11-23"),
        (7, "2026-11-22"),  # 01:30+02:00
    ],
)
def test_partition_day_is_the_utc_day_of_event_time(
    collected: Collected, seq: int, day: str
) -> None:
    assert collected.valid["orders"][seq]["partition_date"] == day


def test_timestamp_precision_and_offsets(collected: Collected) -> None:
    orders = collected.valid["orders"]

    assert orders[7]["order_ts"] == micros("2026-11-22T23:30:00+00:00")
    assert orders[8]["order_ts"] == micros("2026-11-22T19:00:00+00:00")
    assert orders[9]["order_ts"] == micros("2026-11-22T19:00:00.123456+00:00")


@pytest.mark.parametrize(
    ("seq", "op", "deleted"),
    [(1, "c", False), (2, "u", False), (3, "d", True), (4, "u", False), (5, "u", False),
     (6, "d", True), (11, "d", True)],
)  # fmt: skip
def test_ops_are_normalised(collected: Collected, seq: int, op: str, deleted: bool) -> None:
    row = collected.valid["orders"][seq]

    assert (row["_op"], row["_is_deleted"]) == (op, deleted)


def test_optional_fields_and_unknown_fields(collected: Collected) -> None:
    row = collected.valid["orders"][10]

    assert (row["amount"], row["customer_id"], row["status"]) == (7.0, None, None)
    assert "coupon" not in row
    delete = collected.valid["orders"][11]
    assert (delete["order_id"], delete["amount"], delete["status"]) == ("o-11", None, None)


def test_strings_that_look_like_other_json_values(collected: Collected) -> None:
    rows = collected.valid["orders"]

    assert (rows[24]["order_id"], rows[24]["customer_id"], rows[24]["status"]) == (
        "[1]",
        "42",
        "true",
    )
    assert (rows[25]["order_id"], rows[25]["customer_id"]) == ('"Infinity"', '{"a": 1}')


def test_utf8_text_and_surrounding_whitespace(collected: Collected) -> None:
    assert collected.valid["orders"][23]["status"] == "déjà vu ✓"


CUSTOM_TABLES = """
event_types:
  page.view:
    table: page_views
    schema: {view_id: long, is_bot: boolean, at: timestamp, seen_at: timestamp}
    record_key: view_id
    precombine: at
    partition_by: {name: view_date, from: seen_at}
    max_record_bytes: 200
  orders:
    table: hudi_orders
    schema: {order_id: string, order_ts: timestamp}
    record_key: order_id
    precombine: order_ts
    partition_by: {name: partition_date, from: order_ts}
"""


def view(**fields: Any) -> dict[str, Any]:
    event = {"event_type": "page.view", "view_id": 1, "is_bot": False,
             "at": "2026-11-22T19:00:00Z", "seen_at": "2026-11-23T00:00:01Z"}  # fmt: skip
    event.update(fields)
    return {k: v for k, v in event.items() if v is not _ABSENT}


CUSTOM_QUARANTINED: dict[int, tuple[Payload, str | None]] = {
    10: (view(view_id="abc"), "wrong type for view_id: expected long"),
    11: (view(view_id=1.5), "wrong type for view_id: expected long"),
    12: (view(view_id=2**63), "wrong type for view_id: expected long"),
    13: (view(view_id=_ABSENT), "missing record key view_id"),
    14: (view(is_bot="true"), "wrong type for is_bot: expected boolean"),
    15: (view(seen_at=_ABSENT), "missing event time seen_at"),
    16: (view(pad="x" * 150), "record larger than 200 bytes"),
    17: (view(op="d"), None),  # no op_field declared: op is an unknown field
}


def test_other_declarations(spark: SparkSession) -> None:
    specs = parse_tables(CUSTOM_TABLES)
    payloads: dict[int, Payload] = {
        1: view(view_id=42, is_bot=True),
        2: {"event_type": "orders", "order_id": "o", "order_ts": "2026-11-22T19:00:00Z",
            "pad": "x" * 300},  # the smaller limit applies to page.view only
        **{s: p for s, (p, _) in CUSTOM_QUARANTINED.items()},
    }  # fmt: skip
    split = split_batch(kinesis_rows(spark, payloads), specs)

    views = collect_by_seq(split.valid["page.view"], columns.INGEST_SEQ)
    orders = collect_by_seq(split.valid["orders"], columns.INGEST_SEQ)
    reasons = {
        int(r[columns.Q_SEQUENCE_NUMBER]): r[columns.Q_REASON] for r in split.quarantine.collect()
    }

    assert (views[1]["view_id"], views[1]["is_bot"], views[1]["view_date"]) == (
        42,
        True,
        "2026-11-23",
    )
    assert views[17]["_op"] == "u"
    assert list(orders) == [2]
    assert reasons == {s: r for s, (_, r) in CUSTOM_QUARANTINED.items() if r is not None}


def test_results_do_not_depend_on_the_session_time_zone(spark: SparkSession) -> None:
    specs = load_tables(TABLES_YAML)
    batch = kinesis_rows(spark, {1: VALID[1], 7: VALID[7]})
    spark.conf.set("spark.sql.session.timeZone", "America/Los_Angeles")
    try:
        rows = collect_by_seq(split_batch(batch, specs).valid["orders"], columns.INGEST_SEQ)
    finally:
        spark.conf.set("spark.sql.session.timeZone", "UTC")

    assert rows[1]["partition_date"] == "2026-11-22"
    assert rows[1]["order_ts"] == micros("2026-11-22T23:59:59.999+00:00")
    assert rows[7]["partition_date"] == "2026-11-22"


def test_user_records_of_a_kpl_aggregate_and_a_corrupt_aggregate(
    spark: SparkSession, specs: Mapping[str, TableSpec]
) -> None:
    # What the Kinesis source emits for one aggregate of three user records (its sequence
    # number shared, each at its index) and for an aggregate it could not read.
    user = [json.dumps(order(1, amount=1.0)).encode(), b"not json", json.dumps(order(1)).encode()]
    corrupt = bytes.fromhex("f3899ac2") + b"\x00" * 20
    rows: list[tuple[Any, ...]] = [
        (bytearray(p), "events", "pk", SHARD, "77", ARRIVAL, i, None) for i, p in enumerate(user)
    ]
    rows.append((bytearray(corrupt), "events", "pk", SHARD, "78", ARRIVAL, None, "MD5 mismatch"))
    split = split_batch(spark.createDataFrame(rows, KINESIS_SCHEMA), specs)
    valid = split.valid["orders"].collect()
    assert [(r[columns.INGEST_SEQ], r[columns.INGEST_SUBSEQ]) for r in valid] == [
        ("77", 0),
        ("77", 2),
    ]
    quarantined = {
        r[columns.Q_SEQUENCE_NUMBER]: r for r in split.quarantine.collect()
    }  # each user record keyed by its own place, seq/index
    assert set(quarantined) == {"77/1", "78"}
    assert quarantined["78"][columns.Q_REASON] == (
        "corrupt KPL aggregate: MD5 mismatch (raw_payload is base64)"
    )
    assert base64.b64decode(quarantined["78"][columns.Q_RAW_PAYLOAD]) == corrupt
    assert quarantined["77/1"][columns.Q_REASON].startswith("not JSON")


def test_each_timestamp_field_is_parsed_once_per_record(
    spark: SparkSession, specs: Mapping[str, TableSpec]
) -> None:
    """The checks and the output read one parsed column per timestamp field instead of
    parsing the text again for each (about a dozen parses a record before). Counted in the optimized
    plans (try_to_timestamp is Spark's GetTimestamp) of the classified batch and of the
    valid rows read from its cache, as the job reads them."""
    split = split_batch(kinesis_rows(spark, {1: VALID[next(iter(VALID))]}), specs)
    fields = sum(t == "timestamp" for spec in specs.values() for t in spec.schema.values())

    def parses(frame: DataFrame) -> int:
        """In the frame's own plan, above the cached batch's (printed below it)."""
        plan = frame._jdf.queryExecution().optimizedPlan().toString()
        return plan.split("InMemoryRelation")[0].count("gettimestamp(")

    spark.conf.set("spark.sql.debug.maxToStringFields", "100000")  # the whole plan's text
    try:
        assert parses(split.classified) == fields
        split.classified.persist()
        for frame in split.valid.values():
            assert "InMemoryRelation" in frame._jdf.queryExecution().optimizedPlan().toString()
            assert parses(frame) == 0
    finally:
        split.classified.unpersist()
        spark.conf.unset("spark.sql.debug.maxToStringFields")


def test_an_event_types_outputs_are_planned_when_first_asked_for() -> None:
    planned: list[str] = []

    def plan(event_type: str) -> Any:
        planned.append(event_type)
        return f"frame of {event_type}"

    outputs = _Outputs(["orders", "ticks"], plan)
    assert list(outputs) == ["orders", "ticks"] and len(outputs) == 2 and planned == []
    assert outputs["ticks"] == outputs["ticks"] == "frame of ticks"
    assert planned == ["ticks"]
    with pytest.raises(KeyError):
        outputs["clicks"]
