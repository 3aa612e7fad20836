package lakehouse.kinesis;

import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * The source's fixed output schema, and the conversion of a record into its rows: one row for a
 * plain record, one per user record for a KPL aggregate (see {@link KplAggregate}).
 *
 * <p>{@code subSequenceNumber} is a user record's index inside its aggregate (null for a plain
 * record): (sequenceNumber, subSequenceNumber) is its place on the stream, as the KCL numbers it.
 * {@code aggregateError} says why a record that starts as an aggregate could not be read; such a
 * record is emitted once, whole, for the quarantine.
 */
public final class KinesisSchema {
  private KinesisSchema() {}

  public static final StructType SCHEMA = new StructType()
      .add("data", DataTypes.BinaryType, false)
      .add("stream", DataTypes.StringType, false)
      .add("partitionKey", DataTypes.StringType, false)
      .add("shardId", DataTypes.StringType, false)
      .add("sequenceNumber", DataTypes.StringType, false)
      .add("approximateArrivalTimestamp", DataTypes.TimestampType, true)
      .add("subSequenceNumber", DataTypes.LongType, true)
      .add("aggregateError", DataTypes.StringType, true);

  /** Every row a Kinesis record stands for, in stream order. */
  public static List<InternalRow> toRows(KinesisRecord r, UTF8String stream, UTF8String shardId) {
    List<InternalRow> rows = new ArrayList<>(1);
    if (!KplAggregate.isAggregate(r.data)) {
      rows.add(row(r, r.data, r.partitionKey, stream, shardId, null, null));
      return rows;
    }
    try {
      List<KplAggregate.UserRecord> users = KplAggregate.deaggregate(r.data);
      for (int i = 0; i < users.size(); i++) {
        KplAggregate.UserRecord u = users.get(i);
        rows.add(row(r, u.data, u.partitionKey, stream, shardId, (long) i, null));
      }
    } catch (KplAggregate.CorruptAggregateException e) {
      rows.add(row(r, r.data, r.partitionKey, stream, shardId, null, e.getMessage()));
    }
    return rows;
  }

  private static InternalRow row(KinesisRecord r, byte[] data, String partitionKey,
      UTF8String stream, UTF8String shardId, Long subSequence, String aggregateError) {
    return new GenericInternalRow(new Object[] {
        data,
        stream,
        UTF8String.fromString(partitionKey),
        shardId,
        UTF8String.fromString(r.sequenceNumber),
        r.approximateArrivalMillis == 0L ? null : r.approximateArrivalMillis * 1000L, // micros
        subSequence,
        aggregateError == null ? null : UTF8String.fromString(aggregateError),
    });
  }
}
