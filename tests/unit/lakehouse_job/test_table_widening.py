"""lakehouse_job.table_widening: the rows a widened table is rewritten with."""

from __future__ import annotations

from decimal import Decimal

import pytest
from pyspark.sql import SparkSession

from lakehouse_job.table_widening import metastore_names, widened_rows
from lakehouse_tables.declarations import load_tables

pytestmark = pytest.mark.unit


def test_rows_keep_every_value_in_the_new_types_without_hudi_columns(spark: SparkSession) -> None:
    table = spark.createDataFrame(
        [("c1", "k1", 2**53, Decimal("12345678.91"), 7, "x")],
        "_hoodie_commit_time string, order_id string, qty bigint, price decimal(10,2), "
        "n bigint, status string",
    )
    order = ["order_id", "status", "qty", "price", "n", "coupon"]  # coupon: not written yet
    widened = {"qty": "double", "price": "decimal(12,2)", "n": "decimal(19,0)"}
    rows = widened_rows(table, order, widened)
    assert rows.columns == ["order_id", "status", "qty", "price", "n"]
    assert rows.schema.simpleString() == (
        "struct<order_id:string,status:string,qty:double,price:decimal(12,2),n:decimal(19,0)>"
    )
    assert rows.collect()[0].asDict() == {
        "order_id": "k1",
        "status": "x",
        "qty": float(2**53),
        "price": Decimal("12345678.91"),
        "n": Decimal(7),
    }


def test_a_merge_on_read_table_is_registered_three_times() -> None:
    orders = load_tables()["orders"]
    assert metastore_names(orders, "COPY_ON_WRITE") == ["hudi_orders_cow"]
    assert metastore_names(orders, "MERGE_ON_READ") == [
        "hudi_orders_mor",
        "hudi_orders_mor_ro",
        "hudi_orders_mor_rt",
    ]
