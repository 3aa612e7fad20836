package lakehouse.kinesis;

import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.unsafe.types.UTF8String;

/** The source's fixed output schema, and the conversion of a record into a row of it. */
public final class KinesisSchema {
  private KinesisSchema() {}

  public static final StructType SCHEMA = new StructType()
      .add("data", DataTypes.BinaryType, false)
      .add("stream", DataTypes.StringType, false)
      .add("partitionKey", DataTypes.StringType, false)
      .add("shardId", DataTypes.StringType, false)
      .add("sequenceNumber", DataTypes.StringType, false)
      .add("approximateArrivalTimestamp", DataTypes.TimestampType, true);

  public static InternalRow toRow(KinesisRecord r, UTF8String stream, UTF8String shardId) {
    return new GenericInternalRow(new Object[] {
        r.data,
        stream,
        UTF8String.fromString(r.partitionKey),
        shardId,
        UTF8String.fromString(r.sequenceNumber),
        r.approximateArrivalMillis == 0L ? null : r.approximateArrivalMillis * 1000L, // micros
    });
  }
}
