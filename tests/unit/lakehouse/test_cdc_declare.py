"""Tables-file entries from PostgreSQL's catalog (lakehouse.cdc_declare)."""

from __future__ import annotations

import pytest

from lakehouse.cdc import CdcError
from lakehouse.cdc_declare import CapturedTable, Column, declared_type, entry
from lakehouse_tables.declarations import parse_tables

pytestmark = pytest.mark.unit

LINES = CapturedTable(
    "public",
    "order_lines",
    (
        Column("order_id", "bigint"),
        Column("line_no", "integer"),
        Column("sku", "text"),
        Column("price", "numeric", 12, 2),
        Column("shipped_at", "timestamp with time zone"),
        Column("tags", "ARRAY", udt_name="_text"),
    ),
    ("order_id", "line_no"),
    "f",
)


@pytest.mark.parametrize(
    ("column", "declared"),
    [
        (Column("a", "integer"), "long"),
        (Column("a", "numeric", 10, 3), "decimal(10,3)"),
        (Column("a", "numeric"), "string"),
        (Column("a", "double precision"), "double"),
        (Column("a", "boolean"), "boolean"),
        (Column("a", "timestamp without time zone"), "timestamp"),
        (Column("a", "date"), "date"),
        (Column("a", "time without time zone"), "string"),
        (Column("a", "character varying"), "string"),
        (Column("a", "USER-DEFINED", udt_name="mood"), "string"),
        (Column("a", "ARRAY", udt_name="_int4"), None),
    ],
)
def test_each_column_type_as_the_cdc_service_writes_it(column: Column, declared: str) -> None:
    assert declared_type(column)[0] == declared


def test_an_entry_with_a_key_of_several_columns_loads_as_the_job_reads_it() -> None:
    text = entry(LINES)
    assert "record_key: [order_id, line_no]" in text
    assert "# tags: ARRAY is not declared" in text
    assert "REPLICA IDENTITY" not in text
    spec = parse_tables("event_types:\n" + text, "declared")["cdc_order_lines"]
    assert spec.record_keys == ("order_id", "line_no")
    assert spec.stream == "*.public.order_lines"
    assert str(spec.schema["price"]) == "decimal(12,2)"
    assert (spec.precombine, spec.format, spec.op_field) == ("source_lsn", "debezium", "op")


def test_a_table_the_lake_cannot_key_is_refused_in_words() -> None:
    keyless = CapturedTable("public", "log", (Column("line", "text"),), (), "d")
    with pytest.raises(CdcError, match=r"public\.log has no primary key"):
        entry(keyless)
    by_amount = CapturedTable("shop", "t", (Column("amount", "numeric", 10, 2),), ("amount",), "d")
    with pytest.raises(CdcError, match="primary key column amount is decimal"):
        entry(by_amount)
    clash = CapturedTable("public", "t", (Column("source_lsn", "bigint"),), ("source_lsn",), "f")
    with pytest.raises(CdcError, match="has a column source_lsn"):
        entry(clash)


def test_a_table_without_replica_identity_full_is_flagged() -> None:
    text = entry(CapturedTable("shop", "t", (Column("id", "bigint"),), ("id",), "d"))
    assert "ALTER TABLE shop.t REPLICA IDENTITY FULL" in text
    assert text.startswith("  cdc_shop_t:")
