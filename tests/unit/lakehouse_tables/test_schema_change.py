"""lakehouse_tables.schema_change: declarations held against stored tables."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import replace
from typing import cast

import pytest

from lakehouse_tables.declarations import TableSpec, load_tables
from lakehouse_tables.schema_change import (
    StoredTable,
    avro_to_spark,
    commit_schema,
    completed_instants,
    metastore_widenings,
    parse_properties,
    plan_table,
    refusal_report,
    row_columns,
    stored_table,
    table_type_changes,
    widens,
)
from lakehouse_tables.types import FieldType, parse_type

pytestmark = pytest.mark.unit

ORDERS = load_tables()["orders"]


def stored(spec: TableSpec = ORDERS, **overrides: object) -> StoredTable:
    table = StoredTable(
        name="hudi_orders_cow",
        columns=tuple(row_columns(spec)),
        record_key=spec.record_key,
        precombine=spec.precombine,
        table_type="COPY_ON_WRITE",
    )
    return replace(table, **overrides)  # type: ignore[arg-type]


def with_schema(spec: TableSpec, schema: Mapping[str, object]) -> TableSpec:
    return replace(
        spec,
        schema={
            n: parse_type(t) if isinstance(t, str) else cast(FieldType, t)
            for n, t in schema.items()
        },
    )


def test_an_unchanged_declaration_plans_no_change() -> None:
    plan = plan_table(ORDERS, "COPY_ON_WRITE", stored())
    assert plan.changes == ()
    assert list(plan.column_order) == [name for name, _ in row_columns(ORDERS)]


def test_a_new_table_is_written_in_declaration_order() -> None:
    plan = plan_table(ORDERS, "COPY_ON_WRITE", None)
    assert [c.kind for c in plan.changes] == ["new table"]
    assert list(plan.column_order) == [name for name, _ in row_columns(ORDERS)]


def test_a_column_declared_in_the_middle_is_appended_to_the_table() -> None:
    schema = dict(ORDERS.schema)
    evolved = {
        **dict(list(schema.items())[:3]),
        "coupon": "string",
        **dict(list(schema.items())[3:]),
    }
    plan = plan_table(with_schema(ORDERS, evolved), "COPY_ON_WRITE", stored())
    assert [(c.kind, c.column, c.new, c.allowed) for c in plan.changes] == [
        ("add", "coupon", "string", True)
    ]
    assert list(plan.column_order) == [*(n for n, _ in row_columns(ORDERS)), "coupon"]
    assert "rows written before read NULL" in plan.changes[0].message


def test_a_dropped_or_renamed_column_is_refused_with_what_to_do() -> None:
    schema = {k: v for k, v in ORDERS.schema.items() if k != "status"}
    plan = plan_table(with_schema(ORDERS, schema), "COPY_ON_WRITE", stored(), "my.yaml")
    (refused,) = plan.refused
    assert (refused.kind, refused.column) == ("drop", "status")
    assert refused.message.startswith("my.yaml, entry 'orders', table hudi_orders_cow: ")
    assert "declare it again" in refused.message


def test_a_narrowed_or_changed_type_is_refused() -> None:
    schema = {**ORDERS.schema, "amount": "long"}  # double -> bigint narrows
    (refused,) = plan_table(with_schema(ORDERS, schema), "COPY_ON_WRITE", stored()).refused
    assert (refused.kind, refused.old, refused.new) == ("retype", "double", "bigint")
    assert "as a new column (e.g. 'amount_v2')" in refused.message
    assert "a type may only widen" in refused.message


@pytest.mark.parametrize(
    ("old", "new", "allowed"),
    [
        ("bigint", "double", True),
        ("int", "bigint", True),
        ("float", "double", True),
        ("bigint", "decimal(19,0)", True),  # every long fits
        ("bigint", "decimal(21,2)", True),
        ("bigint", "decimal(18,0)", False),  # 2**63 - 1 has 19 digits
        ("bigint", "decimal(20,2)", False),
        ("int", "decimal(10,0)", True),
        ("decimal(10,2)", "decimal(12,2)", True),
        ("decimal(10,2)", "decimal(11,3)", True),  # 8 integer digits, one more fraction
        ("decimal(10,2)", "decimal(11,4)", False),  # 7 integer digits: values would not fit
        ("decimal(10,2)", "decimal(12,1)", False),  # a fraction digit lost
        ("decimal(10,2)", "decimal(10,2)", False),  # unchanged is no widening
        ("decimal(10,2)", "double", False),  # inexact
        ("double", "bigint", False),
        ("double", "decimal(38,10)", False),
        ("string", "bigint", False),
        ("struct<q:bigint>", "struct<q:double>", False),  # nested types keep theirs
        ("BIGINT", "double", True),  # the metastore's spelling
    ],
)
def test_which_type_changes_widen(old: str, new: str, allowed: bool) -> None:
    assert widens(old, new) is allowed


def test_a_widened_column_is_planned_for_a_rewrite_in_place() -> None:
    base = {**ORDERS.schema, "qty": "long", "price": "decimal(10,2)"}
    table = stored(with_schema(ORDERS, base))
    wider = {**base, "qty": "double", "price": "decimal(12,2)"}
    plan = plan_table(with_schema(ORDERS, wider), "COPY_ON_WRITE", table)
    assert plan.refused == []
    assert plan.widened == {"qty": "double", "price": "decimal(12,2)"}
    assert list(plan.column_order) == [name for name, _ in table.columns]
    assert all("rewritten once in the new types" in c.message for c in plan.changes)


def test_the_metastore_follows_only_widenings_of_what_it_holds() -> None:
    declared = {"qty": "double", "price": "decimal(12,2)", "status": "string", "n": "bigint"}
    metastore = [("qty", "BIGINT"), ("price", "decimal(10,2)"), ("status", "string"),
                 ("n", "double"), ("gone", "int")]  # fmt: skip
    assert metastore_widenings(metastore, declared) == {"qty": "double", "price": "decimal(12,2)"}


def test_other_keys_are_refused() -> None:
    plan = plan_table(ORDERS, "COPY_ON_WRITE", stored(record_key="customer_id", precombine="x"))
    assert sorted(c.kind for c in plan.refused) == ["precombine", "record key"]
    report = refusal_report(plan.changes)
    assert "nothing was written" in report and "record_key changed from 'customer_id'" in report


def test_a_plan_lists_key_changes_then_the_tables_columns_in_its_order_then_additions() -> None:
    """One change of each kind: what the refusal report and the start-up log list, in
    this order (the keys, each stored column as the table holds it, the new columns)."""
    columns = dict(row_columns(ORDERS))
    seq = "_ingest_subseq"  # bigint, stored as int: widened
    table = [(seq, "int"), *((n, t) for n, t in columns.items() if n != seq), ("gone", "int")]
    schema = {**ORDERS.schema, "amount": "long", "coupon": "string"}
    plan = plan_table(
        with_schema(ORDERS, schema), "COPY_ON_WRITE", stored(columns=tuple(table), precombine="x")
    )
    assert [(c.kind, c.column) for c in plan.changes] == [
        ("precombine", None),
        ("widen", seq),
        ("retype", "amount"),
        ("drop", "gone"),
        ("add", "coupon"),
    ]
    assert list(plan.column_order) == [*(n for n, _ in table if n != "gone"), "coupon"]


def test_a_dropped_table_type_is_refused_and_a_missing_table_is_created() -> None:
    cow_only = replace(ORDERS, table_types=("COPY_ON_WRITE",))
    assert table_type_changes(ORDERS, []) == []  # nothing stored yet
    assert table_type_changes(ORDERS, ["COPY_ON_WRITE", "MERGE_ON_READ"]) == []
    (dropped,) = table_type_changes(cow_only, ["COPY_ON_WRITE", "MERGE_ON_READ"])
    assert (dropped.table, dropped.allowed) == ("hudi_orders_mor", False)
    # A crash between a new entry's first CoW and MoR writes leaves this, and so does a
    # table type the user adds: never a refusal (the replay, or a backfill, fills it).
    (added,) = table_type_changes(ORDERS, ["COPY_ON_WRITE"])
    assert (added.table, added.new, added.allowed) == ("hudi_orders_mor", "MERGE_ON_READ", True)
    assert "lakehouse backfill --table orders" in added.message


def test_the_stored_state_is_read_from_properties_and_the_newest_commit_with_a_schema() -> None:
    names = ["1.commit", "3.deltacommit", "2.commit", "4.commit.requested", "hoodie.properties"]
    assert completed_instants(names) == ["3.deltacommit", "2.commit", "1.commit"]
    avro = {
        "type": "record",
        "name": "r",
        "fields": [
            {"name": "_hoodie_commit_time", "type": ["null", "string"]},
            {"name": "order_id", "type": ["null", "string"]},
            {"name": "n", "type": ["null", "long"]},
            {"name": "ts", "type": ["null", {"type": "long", "logicalType": "timestamp-micros"}]},
            {"name": "d", "type": ["null", {"type": "int", "logicalType": "date"}]},
            {
                "name": "m",
                "type": [
                    "null",
                    {"type": "bytes", "logicalType": "decimal", "precision": 12, "scale": 2},
                ],
            },
            {
                "name": "items",
                "type": [
                    "null",
                    {
                        "type": "array",
                        "items": {
                            "type": "record",
                            "name": "i",
                            "fields": [{"name": "q", "type": "long"}],
                        },
                    },
                ],
            },
            {"name": "p", "type": ["null", {"type": "map", "values": "string"}]},
        ],
    }
    commit = json.dumps({"extraMetadata": {"schema": json.dumps(avro)}})
    assert commit_schema(commit) == avro
    assert commit_schema(json.dumps({"extraMetadata": {}})) is None
    props = parse_properties(
        "#comment\nhoodie.table.recordkey.fields=order_id\nhoodie.table.precombine.field=ts\n"
    )
    table = stored_table("t", props, avro)
    assert table.columns == (
        ("order_id", "string"),
        ("n", "bigint"),
        ("ts", "timestamp"),
        ("d", "date"),
        ("m", "decimal(12,2)"),
        ("items", "array<struct<q:bigint>>"),
        ("p", "map<string,string>"),
    )
    assert (table.record_key, table.precombine) == ("order_id", "ts")
    assert avro_to_spark("double") == "double"


def nullable(avro: object) -> list[object]:
    return ["null", avro]


# Each declared type with the Avro Hudi 0.15 stores for it (Spark's schema converter:
# nullable unions, named nested records, decimals as fixed with their logical type).
STORED_AVRO: dict[str, object] = {
    "decimal(12,2)": {
        "type": "fixed",
        "name": "fixed",
        "namespace": "hoodie.t.t_record.amount",
        "size": 6,
        "logicalType": "decimal",
        "precision": 12,
        "scale": 2,
    },
    "date": {"type": "int", "logicalType": "date"},
    "struct<id:string,reading:double>": {
        "type": "record",
        "name": "device",
        "namespace": "hoodie.t.t_record",
        "fields": [
            {"name": "id", "type": nullable("string"), "default": None},
            {"name": "reading", "type": nullable("double"), "default": None},
        ],
    },
    "array<struct<sku:string,qty:long>>": {
        "type": "array",
        "items": nullable(
            {
                "type": "record",
                "name": "items",
                "fields": [
                    {"name": "sku", "type": nullable("string")},
                    {"name": "qty", "type": nullable("long")},
                ],
            }
        ),
    },
    "map<string,timestamp>": {
        "type": "map",
        "values": nullable({"type": "long", "logicalType": "timestamp-micros"}),
    },
}


@pytest.mark.parametrize("declared", sorted(STORED_AVRO))
def test_a_declared_type_plans_unchanged_against_what_hudi_stored_for_it(declared: str) -> None:
    spec = with_schema(ORDERS, {**ORDERS.schema, "extra": declared})
    wanted = dict(row_columns(spec))["extra"]
    assert wanted == avro_to_spark(nullable(STORED_AVRO[declared]))
