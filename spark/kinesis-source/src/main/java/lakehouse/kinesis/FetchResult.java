package lakehouse.kinesis;

import java.util.List;

/** What the driver read from one shard for one micro-batch. */
public final class FetchResult {
  public final List<KinesisRecord> records;
  public final boolean drained;
  public final boolean caughtUp;
  /** The last page's MillisBehindLatest: how far the shard's tip is ahead; null if unknown. */
  public final Long millisBehindLatest;

  public FetchResult(List<KinesisRecord> records, boolean drained, boolean caughtUp) {
    this(records, drained, caughtUp, null);
  }

  public FetchResult(List<KinesisRecord> records, boolean drained, boolean caughtUp,
      Long millisBehindLatest) {
    this.records = List.copyOf(records);
    this.drained = drained;
    this.caughtUp = caughtUp;
    this.millisBehindLatest = millisBehindLatest;
  }

  public String firstSequenceNumber() {
    return records.isEmpty() ? null : records.get(0).sequenceNumber;
  }

  public String lastSequenceNumber() {
    return records.isEmpty() ? null : records.get(records.size() - 1).sequenceNumber;
  }

  public long approximateBytes() {
    long total = 0;
    for (KinesisRecord r : records) {
      total += r.approximateBytes();
    }
    return total;
  }
}
