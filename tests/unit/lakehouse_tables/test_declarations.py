"""lakehouse_tables.declarations: tables.yaml loading and validation."""

from __future__ import annotations

import copy
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from lakehouse_tables.declarations import TABLES_YAML, TablesConfigError, load_tables, parse_tables
from lakehouse_tables.types import Decimal, parse_type

pytestmark = pytest.mark.unit

SOURCE = "conf/tables-under-test.yaml"

BASE: dict[str, Any] = {
    "defaults": {"table_types": ["COPY_ON_WRITE", "MERGE_ON_READ"], "max_record_bytes": 65536},
    "event_types": {
        "orders": {
            "table": "hudi_orders",
            "schema": {
                "order_id": "string",
                "amount": "double",
                "order_ts": "timestamp",
            },
            "record_key": "order_id",
            "precombine": "order_ts",
            "partition_by": {"name": "partition_date", "from": "order_ts"},
            "op_field": "op",
        },
        "ticker": {
            "table": "stock_ticks",
            "schema": {"event_id": "string", "event_time": "timestamp"},
            "record_key": "event_id",
            "precombine": "event_time",
            "partition_by": {"name": "event_date", "from": "event_time"},
        },
    },
}


def _orders(doc: dict[str, Any]) -> dict[str, Any]:
    entry: dict[str, Any] = doc["event_types"]["orders"]
    return entry


def test_project_tables_yaml_loads() -> None:
    specs = load_tables(TABLES_YAML)

    assert list(specs) == ["orders", "ticker", "clicks", "iot"]
    orders = specs["orders"]
    assert list(orders.schema.items()) == [
        ("order_id", "string"),
        ("customer_id", "string"),
        ("amount", "double"),
        ("status", "string"),
        ("order_ts", "timestamp"),
        ("items", parse_type("array<struct<sku:string,qty:long,price:decimal(10,2)>>")),
    ]
    assert (orders.record_key, orders.precombine) == ("order_id", "order_ts")
    assert (orders.partition_name, orders.partition_source) == ("partition_date", "order_ts")
    assert orders.op_field == "op"
    assert specs["ticker"].op_field is None
    assert orders.table_types == ("COPY_ON_WRITE", "MERGE_ON_READ")
    assert orders.max_record_bytes == 65536
    assert orders.event_time_window == (946_684_800_000_000, 4_102_444_799_999_999)
    assert orders.event_time_fields == ("order_ts",)
    assert orders.table_name("MERGE_ON_READ") == "hudi_orders_mor"
    assert orders.table_name("COPY_ON_WRITE") == "hudi_orders_cow"


def test_richer_types_are_parsed_and_kept_in_order() -> None:
    doc = copy.deepcopy(BASE)
    _orders(doc)["schema"].update(
        total="decimal(12, 2)",
        items="array<struct<sku:string,qty:long,price:decimal(10,2)>>",
        shipped_on="date",
        tags="map<string, string>",
    )

    orders = parse_tables(yaml.safe_dump(doc, sort_keys=False))["orders"]

    assert {name: str(t) for name, t in orders.schema.items()} == {
        "order_id": "string",
        "amount": "double",
        "order_ts": "timestamp",
        "total": "decimal(12,2)",
        "items": "array<struct<sku:string,qty:long,price:decimal(10,2)>>",
        "shipped_on": "date",
        "tags": "map<string,string>",
    }
    assert orders.schema["total"] == Decimal(12, 2)
    assert orders.schema["shipped_on"] == "date"


def test_specs_are_immutable() -> None:
    orders = parse_tables(yaml.safe_dump(BASE))["orders"]

    with pytest.raises(AttributeError):
        orders.table = "other"  # type: ignore[misc]
    with pytest.raises(TypeError):
        orders.schema["amount"] = "long"  # type: ignore[index]
    assert hash(orders) == hash(parse_tables(yaml.safe_dump(BASE))["orders"])


def test_entries_override_defaults() -> None:
    doc = copy.deepcopy(BASE)
    _orders(doc).update(table_types=["MERGE_ON_READ"], max_record_bytes=1024)

    specs = parse_tables(yaml.safe_dump(doc))

    assert specs["orders"].table_types == ("MERGE_ON_READ",)
    assert specs["orders"].max_record_bytes == 1024
    assert specs["ticker"].max_record_bytes == 65536


Mutation = Callable[[dict[str, Any]], None]


def _set(path: str, value: object) -> Mutation:
    def mutate(doc: dict[str, Any]) -> None:
        *parents, leaf = path.split("/")
        node = doc
        for part in parents:
            node = node[part]
        node[leaf] = value

    return mutate


def _delete(path: str) -> Mutation:
    def mutate(doc: dict[str, Any]) -> None:
        *parents, leaf = path.split("/")
        node = doc
        for part in parents:
            node = node[part]
        del node[leaf]

    return mutate


ORDERS = "event_types/orders"
ORDER_FIELDS = {"order_id": "string", "order_ts": "timestamp", "amount": "double"}
ITEMS = "array<struct<sku:string,price:decimal(10,2)>>"

INVALID: list[tuple[str, Mutation, str]] = [
    (
        "unknown type",
        _set(f"{ORDERS}/schema/amount", "money"),
        "event_types.orders: schema field 'amount' has type 'money': unknown type 'money'",
    ),
    (
        "decimal without precision",
        _set(f"{ORDERS}/schema/amount", "decimal"),
        "event_types.orders: schema field 'amount' has type 'decimal': ends where '(' was expected",
    ),
    (
        "decimal scale above precision",
        _set(f"{ORDERS}/schema/amount", "decimal(4,5)"),
        "schema field 'amount' has type 'decimal(4,5)': decimal scale 5 is outside 0..4",
    ),
    (
        "nested field of an unknown type",
        _set(f"{ORDERS}/schema/amount", "array<struct<sku:string,qty:int>>"),
        "schema field 'amount' has type 'array<struct<sku:string,qty:int>>': unknown type 'int'",
    ),
    (
        "map keyed by a non-string",
        _set(f"{ORDERS}/schema/amount", "map<long,string>"),
        "key type must be string, found 'long'",
    ),
    (
        "type not text",
        _set(f"{ORDERS}/schema/amount", 12),
        "schema field 'amount' has type 12: a type must be text",
    ),
    (
        "same-named decimals of different types (Hudi could never update the table)",
        _set(f"{ORDERS}/schema", {**ORDER_FIELDS, "price": "decimal(12,2)", "items": ITEMS}),
        "event_types.orders: decimal fields named 'price' differ: price is decimal(12,2) "
        "and items[].price is decimal(10,2)",
    ),
    (
        "same-named decimals nested in two places",
        _set(
            f"{ORDERS}/schema",
            {**ORDER_FIELDS, "items": ITEMS, "refunds": "map<string,struct<price:decimal(10,3)>>"},
        ),
        "decimal fields named 'price' differ: items[].price is decimal(10,2) and "
        "refunds{}.price is decimal(10,3)",
    ),
    (
        "decimal record key",
        _set(f"{ORDERS}/schema/order_id", "decimal(10,0)"),
        "record_key 'order_id' has type decimal(10,0), expected string or long",
    ),
    (
        "date precombine",
        _set(f"{ORDERS}/schema/order_ts", "date"),
        "precombine 'order_ts' has type date, expected timestamp",
    ),
    (
        "record key not in schema",
        _set(f"{ORDERS}/record_key", "id"),
        "event_types.orders: record_key 'id' is not a field in schema",
    ),
    (
        "record key of a lossy type",
        _set(f"{ORDERS}/record_key", "amount"),
        "event_types.orders: record_key 'amount' has type double, expected string or long",
    ),
    (
        "precombine not in schema",
        _set(f"{ORDERS}/precombine", "updated_at"),
        "event_types.orders: precombine 'updated_at' is not a field in schema",
    ),
    (
        "precombine not a timestamp",
        _set(f"{ORDERS}/precombine", "amount"),
        "event_types.orders: precombine 'amount' has type double, expected timestamp",
    ),
    (
        "partition source not in schema",
        _set(f"{ORDERS}/partition_by", {"name": "partition_date", "from": "created"}),
        "event_types.orders: partition_by.from 'created' is not a field in schema",
    ),
    (
        "partition column clashes with a field",
        _set(f"{ORDERS}/partition_by", {"name": "amount", "from": "order_ts"}),
        "event_types.orders: partition_by.name 'amount' is derived and must not be in schema",
    ),
    (
        "partition_by shape",
        _set(f"{ORDERS}/partition_by", "order_ts"),
        "event_types.orders: partition_by must be {name: <column>, from: <field>}",
    ),
    (
        "op field also declared as a column",
        _set(f"{ORDERS}/op_field", "amount"),
        "event_types.orders: op_field 'amount' must not be in schema",
    ),
    (
        "required key missing",
        _delete(f"{ORDERS}/precombine"),
        "event_types.orders: missing required key(s): precombine",
    ),
    (
        "misspelt optional key",
        _set(f"{ORDERS}/opfield", "op"),
        "event_types.orders: unknown key(s) opfield",
    ),
    (
        "mixed-case column",
        _set(f"{ORDERS}/schema/Amount", "double"),
        "event_types.orders: schema field: 'Amount' is not a lower-case identifier",
    ),
    (
        "column in the job's namespace",
        _set(f"{ORDERS}/schema/_op", "string"),
        "event_types.orders: schema field: '_op' is not a lower-case identifier",
    ),
    (
        "empty schema",
        _set(f"{ORDERS}/schema", {}),
        "event_types.orders: schema must be a non-empty mapping",
    ),
    (
        "bad table name",
        _set(f"{ORDERS}/table", "hudi-orders"),
        "event_types.orders: table: 'hudi-orders' is not a lower-case identifier",
    ),
    (
        "two entries, one table",
        _set("event_types/ticker/table", "hudi_orders"),
        "event_types.ticker: table 'hudi_orders' is already used by event_types.orders",
    ),
    (
        "unknown table type",
        _set(f"{ORDERS}/table_types", ["COPY_ON_WRITE", "MERGE_ON_WRITE"]),
        "event_types.orders: table_types must be a non-empty list",
    ),
    (
        "max_record_bytes not positive",
        _set("defaults/max_record_bytes", 0),
        "defaults: max_record_bytes must be a positive integer, got 0",
    ),
    (
        "max_record_bytes a boolean",
        _set(f"{ORDERS}/max_record_bytes", True),
        "event_types.orders: max_record_bytes must be a positive integer, got True",
    ),
    (
        "unknown default",
        _set("defaults/max_bytes", 10),
        "defaults: unknown key(s) max_bytes",
    ),
    (
        "no event types",
        _set("event_types", {}),
        "'event_types' must be a non-empty mapping",
    ),
    (
        "event type that a non-string JSON value would match",
        _set("event_types/true", {}),
        "event type 'true' looks like a JSON number, boolean, null, object or array",
    ),
    (
        "entry not a mapping",
        _set(ORDERS, ["table"]),
        "event_types.orders: must be a mapping",
    ),
]


@pytest.mark.parametrize(
    ("mutate", "message"), [(m, msg) for _, m, msg in INVALID], ids=[i for i, _, _ in INVALID]
)
def test_invalid_declarations_name_file_entry_and_problem(mutate: Mutation, message: str) -> None:
    doc = copy.deepcopy(BASE)
    mutate(doc)

    with pytest.raises(TablesConfigError) as error:
        parse_tables(yaml.safe_dump(doc, sort_keys=False), source=SOURCE)

    assert str(error.value).startswith(f"{SOURCE}: ")
    assert message in str(error.value)


def test_duplicate_yaml_keys_are_rejected() -> None:
    # PyYAML would silently keep the second declaration.
    text = """
event_types:
  orders:
    table: hudi_orders
    schema:
      order_id: string
      amount: double
      amount: string
      order_ts: timestamp
    record_key: order_id
    precombine: order_ts
    partition_by: {name: partition_date, from: order_ts}
"""

    with pytest.raises(TablesConfigError, match=rf"^{SOURCE}: line 8: duplicate key 'amount'"):
        parse_tables(text, source=SOURCE)


def test_unparsable_yaml_names_the_file() -> None:
    with pytest.raises(TablesConfigError, match=rf"^{SOURCE}: not valid YAML"):
        parse_tables("event_types: [unclosed", source=SOURCE)


def test_top_level_must_be_a_mapping() -> None:
    with pytest.raises(TablesConfigError, match="expected a mapping with 'event_types'"):
        parse_tables("- orders\n", source=SOURCE)


def test_missing_file_names_the_path(tmp_path: Any) -> None:
    missing = tmp_path / "nope.yaml"

    with pytest.raises(TablesConfigError, match=f"^{missing}: cannot read"):
        load_tables(missing)


@pytest.mark.parametrize(
    ("window", "message"),
    [
        ({"min": "2000-01-01T00:00:00Z"}, "must be {min: <timestamp>, max: <timestamp>}"),
        ({"min": "2000-01-01", "max": "2001-01-01T00:00:00Z"}, "must be quoted timestamps"),
        ({"min": "2001-01-01T00:00:00Z", "max": "2000-01-01T00:00:00Z"}, "min is after max"),
    ],
)
def test_a_bad_event_time_window_names_the_problem(window: dict[str, str], message: str) -> None:
    document = yaml.safe_load(TABLES_YAML.read_text())
    document["event_types"]["orders"]["event_time_window"] = window
    with pytest.raises(TablesConfigError, match=r"event_types\.orders: event_time_window"):
        parse_tables(yaml.safe_dump(document))
    with pytest.raises(TablesConfigError, match=re.escape(message)):
        parse_tables(yaml.safe_dump(document))


CDC_TABLES = Path(__file__).resolve().parents[3] / "services" / "cdc" / "tables.yaml"


def test_declarations_refuse_a_debezium_entry_without_its_needs() -> None:
    entry = CDC_TABLES.read_text()
    with pytest.raises(ValueError, match="expected long with format debezium"):
        parse_tables(entry.replace("source_lsn: long", "source_lsn: timestamp"))
    with pytest.raises(ValueError, match="format debezium needs stream"):
        parse_tables(entry.replace('    stream: "*.public.orders"\n', ""))
    with pytest.raises(ValueError, match="format debezium needs op_field"):
        parse_tables(entry.replace("    op_field: op\n", "", 1))
    with pytest.raises(ValueError, match="format 'avro' is not one of"):
        parse_tables(entry.replace("    format: debezium", "    format: avro", 1))
    with pytest.raises(ValueError, match="is already read by"):
        parse_tables(entry.replace("*.public.orders", "*.public.customers"))


def test_the_shipped_cdc_tables_load() -> None:
    tables = load_tables(CDC_TABLES)

    assert {spec.format for spec in tables.values()} == {"debezium"}


def test_same_named_decimals_of_one_type_are_fine() -> None:
    doc = yaml.safe_load(TABLES_YAML.read_text())
    doc["event_types"]["orders"]["schema"]["price"] = "decimal(10,2)"  # as items[].price
    assert parse_tables(yaml.safe_dump(doc))["orders"].schema["price"] == Decimal(10, 2)


@pytest.mark.parametrize("declared", [["order_id", "customer_id"], "order_id, customer_id"])
def test_a_key_of_several_fields_keeps_their_order(declared: object) -> None:
    doc = copy.deepcopy(BASE)
    _orders(doc)["schema"]["customer_id"] = "long"
    _orders(doc)["record_key"] = declared
    orders = parse_tables(yaml.safe_dump(doc), SOURCE)["orders"]
    assert orders.record_keys == ("order_id", "customer_id")
    assert orders.record_key == "order_id,customer_id"  # Hudi's recordkey.field
    assert parse_tables(yaml.safe_dump(BASE), SOURCE)["orders"].record_keys == ("order_id",)


@pytest.mark.parametrize(
    ("declared", "message"),
    [
        (["order_id", "order_id"], "names a field twice"),
        (["order_id", "amount"], "record_key 'amount' has type double"),
        (["order_id", "nope"], "record_key 'nope' is not a field in schema"),
        ([], "record_key names no field"),
    ],
)
def test_a_key_of_several_fields_is_checked_field_by_field(declared: object, message: str) -> None:
    doc = copy.deepcopy(BASE)
    _orders(doc)["record_key"] = declared
    with pytest.raises(TablesConfigError, match=re.escape(message)):
        parse_tables(yaml.safe_dump(doc), SOURCE)
