"""lakehouse_job.spark_schema: Spark types of the declared and the added columns."""

import pytest
from pyspark.sql.types import (
    ArrayType,
    BooleanType,
    DecimalType,
    DoubleType,
    LongType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

from lakehouse_job.spark_schema import struct_type, valid_row_type
from lakehouse_tables.declarations import TABLES_YAML, load_tables
from lakehouse_tables.schema_change import row_columns

pytestmark = pytest.mark.unit


def test_spark_types_follow_declaration_order() -> None:
    orders = load_tables(TABLES_YAML)["orders"]

    assert struct_type(orders) == StructType(
        [
            StructField("order_id", StringType()),
            StructField("customer_id", StringType()),
            StructField("amount", DoubleType()),
            StructField("status", StringType()),
            StructField("order_ts", TimestampType()),
            StructField(
                "items",
                ArrayType(
                    StructType(
                        [
                            StructField("sku", StringType()),
                            StructField("qty", LongType()),
                            StructField("price", DecimalType(10, 2)),
                        ]
                    )
                ),
            ),
        ]
    )
    assert valid_row_type(orders).fieldNames()[6:] == [
        "partition_date",
        "_op",
        "_is_deleted",
        "_ingest_shard",
        "_ingest_seq",
        "_ingest_subseq",
        "_arrival_ts",
    ]
    assert valid_row_type(orders)["_is_deleted"].dataType == BooleanType()


def test_the_pure_row_columns_are_the_spark_row_type() -> None:
    # schema_change plans without Spark (lakehouse schema diff); both lists must agree.
    for spec in load_tables().values():
        spark_columns = [(f.name, f.dataType.simpleString()) for f in valid_row_type(spec)]
        assert spark_columns == row_columns(spec)
