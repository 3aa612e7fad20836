"""lakehouse_tables.query_views: the SQL of the live views and raw JSON tables."""

from __future__ import annotations

import pytest

from lakehouse_tables import columns
from lakehouse_tables.declarations import load_tables
from lakehouse_tables.query_views import json_columns, json_table, live_view, source_table

pytestmark = pytest.mark.unit


def test_the_live_view_hides_tombstones_of_the_cow_table() -> None:
    orders = load_tables()["orders"]
    view = live_view(orders, "lakehouse")
    assert view.name == "orders" and view.requires == "hudi_orders_cow"
    assert view.ddl.startswith("CREATE OR REPLACE VIEW hive.lakehouse.orders ")
    assert "FROM hudi.lakehouse.hudi_orders_cow" in view.ddl
    assert view.ddl.endswith(f"WHERE NOT {columns.IS_DELETED}")
    for name in (*orders.schema, orders.partition_name, columns.ARRIVAL_TS):
        assert name in view.ddl


def test_a_type_without_cow_reads_the_read_optimized_mor_table() -> None:
    orders = load_tables()["orders"]
    mor_only = type(orders)(**{**orders.__dict__, "table_types": ("MERGE_ON_READ",)})
    assert source_table(mor_only) == "hudi_orders_mor_ro"
    assert "FROM hudi.lakehouse.hudi_orders_mor_ro" in live_view(mor_only, "lakehouse").ddl


def test_the_json_table_reads_every_column_the_raw_copy_writes() -> None:
    orders = load_tables()["orders"]
    table = json_table(orders, "lakehouse", "s3a://lakehouse/raw/hudi_orders")
    assert table.name == "orders_json"
    assert "external_location = 's3a://lakehouse/raw/hudi_orders/'" in table.ddl
    assert "format = 'JSON'" in table.ddl
    names = [name for name, _ in json_columns(orders)]
    assert names[: len(orders.schema)] == list(orders.schema)
    assert {columns.RAW_PAYLOAD, columns.INGEST_SEQ, columns.IS_DELETED} <= set(names)
    kinds = dict(json_columns(orders))
    assert kinds["amount"] == "double" and kinds["order_ts"] == "varchar"
