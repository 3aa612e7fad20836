package lakehouse.kinesis;

import com.amazonaws.services.kinesis.AmazonKinesis;
import java.util.Collections;
import java.util.Iterator;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.connector.read.PartitionReader;
import org.apache.spark.unsafe.types.UTF8String;

/** Emits one shard's records for one batch, from the partition itself or re-read from Kinesis. */
final class KinesisPartitionReader implements PartitionReader<InternalRow> {
  private final UTF8String stream;
  private final UTF8String shardId;
  private final Iterator<KinesisRecord> inline;
  private final AmazonKinesis client;
  private final RangeReader range;
  private Iterator<InternalRow> rowsOfRecord = Collections.emptyIterator();
  private InternalRow current;

  KinesisPartitionReader(KinesisInputPartition p) {
    this.stream = UTF8String.fromString(p.options.streamName);
    this.shardId = UTF8String.fromString(p.shardId);
    if (p.records != null) {
      inline = p.records.iterator();
      client = null;
      range = null;
    } else {
      inline = null;
      client = KinesisClientFactory.create(p.options);
      range = new RangeReader(new ShardCursor(client, p.options, p.shardId, p.rangeStart),
          p.shardId, p.endSequenceNumber, p.options.maxRecordsPerCall);
    }
  }

  @Override
  public boolean next() {
    // A KPL aggregate is one Kinesis record and many rows (KinesisSchema.toRows).
    while (!rowsOfRecord.hasNext()) {
      KinesisRecord record = nextRecord();
      if (record == null) {
        current = null;
        return false;
      }
      rowsOfRecord = KinesisSchema.toRows(record, stream, shardId).iterator();
    }
    current = rowsOfRecord.next();
    return true;
  }

  private KinesisRecord nextRecord() {
    if (inline != null) {
      return inline.hasNext() ? inline.next() : null;
    }
    return range.hasNext() ? range.next() : null;
  }

  @Override
  public InternalRow get() {
    return current;
  }

  @Override
  public void close() {
    if (client != null) {
      client.shutdown();
    }
  }
}
