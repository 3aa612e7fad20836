package lakehouse.kinesis;

import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.connector.read.InputPartition;

/**
 * One shard's part of a micro-batch: the range (rangeStart, endSequenceNumber], and the records
 * themselves when the driver still had them (null: the executor reads the range from Kinesis).
 */
final class KinesisInputPartition implements InputPartition {
  private static final long serialVersionUID = 1L;

  final KinesisOptions options;
  final String shardId;
  final StartingPoint rangeStart;
  final String endSequenceNumber;
  final ArrayList<KinesisRecord> records;

  KinesisInputPartition(KinesisOptions options, String shardId, StartingPoint rangeStart,
      String endSequenceNumber, List<KinesisRecord> records) {
    this.options = options;
    this.shardId = shardId;
    this.rangeStart = rangeStart;
    this.endSequenceNumber = endSequenceNumber;
    this.records = records == null ? null : new ArrayList<>(records);
  }
}
