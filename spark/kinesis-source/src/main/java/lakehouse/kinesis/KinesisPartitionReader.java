package lakehouse.kinesis;

import com.amazonaws.services.kinesis.AmazonKinesis;
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
  private KinesisRecord current;

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
    if (inline != null) {
      current = inline.hasNext() ? inline.next() : null;
    } else {
      current = range.hasNext() ? range.next() : null;
    }
    return current != null;
  }

  @Override
  public InternalRow get() {
    return KinesisSchema.toRow(current, stream, shardId);
  }

  @Override
  public void close() {
    if (client != null) {
      client.shutdown();
    }
  }
}
