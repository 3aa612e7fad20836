"""Spark types for the declared event shapes, the Kinesis source and the quarantine table."""

from __future__ import annotations

from typing import Final

from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    BooleanType,
    DataType,
    DateType,
    DecimalType,
    DoubleType,
    LongType,
    MapType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

from lakehouse_tables import columns
from lakehouse_tables import types as T
from lakehouse_tables.declarations import TableSpec

SPARK_TYPES: Final[dict[T.Primitive, DataType]] = {
    T.Primitive.STRING: StringType(),
    T.Primitive.LONG: LongType(),
    T.Primitive.DOUBLE: DoubleType(),
    T.Primitive.BOOLEAN: BooleanType(),
    T.Primitive.TIMESTAMP: TimestampType(),
    T.Primitive.DATE: DateType(),
}


def spark_type(t: T.FieldType) -> DataType:
    """The Spark type a declared type is written as (everything nullable, as JSON allows)."""
    if isinstance(t, T.Primitive):
        return SPARK_TYPES[t]
    if isinstance(t, T.Decimal):
        return DecimalType(t.precision, t.scale)
    if isinstance(t, T.Struct):
        return StructType([StructField(name, spark_type(ft)) for name, ft in t.fields])
    if isinstance(t, T.Array):
        return ArrayType(spark_type(t.element))
    return MapType(StringType(), spark_type(t.value))


# What the Kinesis source hands to foreachBatch.
KINESIS_SCHEMA: Final = StructType(
    [
        StructField("data", BinaryType()),
        StructField("stream", StringType()),
        StructField("partitionKey", StringType()),
        StructField("shardId", StringType()),
        StructField("sequenceNumber", StringType()),
        StructField("approximateArrivalTimestamp", TimestampType()),
        # A KPL aggregate's user records share its sequence number (KplAggregate.java).
        StructField("subSequenceNumber", LongType()),
        StructField("aggregateError", StringType()),
    ]
)

QUARANTINE_SCHEMA: Final = StructType(
    [
        StructField(columns.Q_RAW_PAYLOAD, StringType()),
        StructField(columns.Q_REASON, StringType(), nullable=False),
        StructField(columns.Q_EVENT_TYPE, StringType()),
        StructField(columns.Q_SHARD_ID, StringType()),
        StructField(columns.Q_SEQUENCE_NUMBER, StringType()),
        StructField(columns.Q_ARRIVAL_TS, TimestampType()),
        StructField(columns.Q_QUARANTINED_AT, TimestampType(), nullable=False),
    ]
)


def struct_type(spec: TableSpec) -> StructType:
    """The declared fields, typed, in declaration order (all nullable, as JSON allows)."""
    return StructType([StructField(name, spark_type(t)) for name, t in spec.schema.items()])


def valid_row_type(spec: TableSpec) -> StructType:
    """Column order and types of the valid rows that `parse.valid_rows` returns."""
    return StructType(
        [
            *struct_type(spec).fields,
            StructField(spec.partition_name, StringType()),
            StructField(columns.OP, StringType()),
            StructField(columns.IS_DELETED, BooleanType()),
            StructField(columns.INGEST_SHARD, StringType()),
            StructField(columns.INGEST_SEQ, StringType()),
            StructField(columns.INGEST_SUBSEQ, LongType()),
            StructField(columns.ARRIVAL_TS, TimestampType()),
        ]
    )
