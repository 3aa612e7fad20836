"""lakehouse_job.table_widening: the rows a widened table is rewritten with, and the
catalog (a dict, then moto's in-process Glue) following the widened types."""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from lakehouse_job.table_widening import (
    GlueColumns,
    align_catalog,
    metastore_names,
    widened_rows,
)
from lakehouse_tables.declarations import TABLES_YAML, TableSpec, load_tables

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


class DictCatalog:
    """A catalog held in a dict: table -> [(column, type)]."""

    def __init__(self, tables: dict[str, list[tuple[str, str]]]) -> None:
        self.tables = tables

    def columns(self, table: str) -> list[tuple[str, str]] | None:
        return self.tables.get(table)

    def set_types(self, table: str, types: Mapping[str, str]) -> None:
        self.tables[table] = [(c, types.get(c, t)) for c, t in self.tables[table]]


@pytest.fixture
def widened_orders(tmp_path: Path) -> dict[str, TableSpec]:
    """The orders entry alone, declaring qty a double and unit_price a decimal(12,2)."""
    wide = "      qty: double\n      unit_price: decimal(12,2)\n"
    text = TABLES_YAML.read_text().replace("amount: double\n", "amount: double\n" + wide, 1)
    (tmp_path / "tables.yaml").write_text(text)
    return {"orders": load_tables(tmp_path / "tables.yaml")["orders"]}


def test_the_catalog_takes_each_widened_type_of_every_registered_table(
    widened_orders: dict[str, TableSpec],
) -> None:
    narrow = [("order_id", "string"), ("qty", "BIGINT"), ("unit_price", "decimal(10,2)")]
    catalog = DictCatalog({"hudi_orders_cow": list(narrow), "hudi_orders_mor_ro": list(narrow)})
    changed = align_catalog(catalog, widened_orders)
    wide = [("order_id", "string"), ("qty", "double"), ("unit_price", "decimal(12,2)")]
    # hudi_orders_mor and _rt are not registered: left alone, not created.
    assert catalog.tables == {"hudi_orders_cow": wide, "hudi_orders_mor_ro": wide}
    assert "hudi_orders_mor_ro.unit_price decimal(12,2)" in changed and len(changed) == 4
    assert align_catalog(catalog, widened_orders) == []  # every start: nothing left to do


def test_glue_tables_take_the_widened_types_and_keep_the_rest(
    monkeypatch: pytest.MonkeyPatch, widened_orders: dict[str, TableSpec]
) -> None:
    import boto3
    from moto import mock_aws

    for key in ("AWS_ENDPOINT_URL", "AWS_CA_BUNDLE", "AWS_PROFILE"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    with mock_aws():
        glue = boto3.client("glue", region_name="eu-west-2")
        glue.create_database(DatabaseInput={"Name": "lake"})
        storage = {
            "Columns": [{"Name": "order_id", "Type": "string"}, {"Name": "qty", "Type": "bigint"}],
            "Location": "s3://lake/warehouse/lake.db/hudi_orders_cow",
            "SerdeInfo": {"SerializationLibrary": "org.apache.hadoop.hive.ql.io.parquet.serde"},
        }
        glue.create_table(
            DatabaseName="lake",
            TableInput={
                "Name": "hudi_orders_cow",
                "StorageDescriptor": storage,
                "TableType": "EXTERNAL_TABLE",
                "Parameters": {"spark.sql.sources.provider": "hudi"},
            },
        )
        catalog = GlueColumns(glue, "lake")
        assert catalog.columns("hudi_orders_mor_rt") is None
        assert align_catalog(catalog, widened_orders) == ["hudi_orders_cow.qty double"]
        table = glue.get_table(DatabaseName="lake", Name="hudi_orders_cow")["Table"]
        assert table["StorageDescriptor"]["Columns"] == [
            {"Name": "order_id", "Type": "string"},
            {"Name": "qty", "Type": "double"},
        ]
        assert table["StorageDescriptor"]["Location"] == storage["Location"]
        assert table["Parameters"] == {"spark.sql.sources.provider": "hudi"}
