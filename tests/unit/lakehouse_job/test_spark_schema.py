"""lakehouse_job.spark_schema: Spark types of the declared and the added columns."""

import pytest
from pyspark.sql.types import (
    BooleanType,
    DoubleType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

from lakehouse_job.spark_schema import struct_type, valid_row_type
from lakehouse_tables.declarations import TABLES_YAML, load_tables

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
        ]
    )
    assert valid_row_type(orders).fieldNames()[5:] == [
        "partition_date",
        "_op",
        "_is_deleted",
        "_ingest_shard",
        "_ingest_seq",
        "_arrival_ts",
    ]
    assert valid_row_type(orders)["_is_deleted"].dataType == BooleanType()
