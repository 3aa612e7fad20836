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

  public String lastSequenceNumber() {
    return records.isEmpty() ? null : records.get(records.size() - 1).sequenceNumber;
  }

  /** The last record's ApproximateArrivalTimestamp (epoch ms), or null if none or unknown. */
  public Long lastArrivalMillis() {
    if (records.isEmpty() || records.get(records.size() - 1).approximateArrivalMillis <= 0) {
      return null;
    }
    return records.get(records.size() - 1).approximateArrivalMillis;
  }

  /**
   * How far behind the shard's tip this read started: the age of the oldest record it returned (the
   * shard's oldest unread record) or the MillisBehindLatest the stream reported, whichever is more.
   * Arrival times are needed as well: some engines (kinesalite) always report 0.
   */
  public long lagMillis(long nowMillis) {
    long lag = millisBehindLatest == null ? 0L : millisBehindLatest;
    if (!records.isEmpty() && records.get(0).approximateArrivalMillis > 0) {
      lag = Math.max(lag, nowMillis - records.get(0).approximateArrivalMillis);
    }
    return lag;
  }

  public long approximateBytes() {
    long total = 0;
    for (KinesisRecord r : records) {
      total += r.approximateBytes();
    }
    return total;
  }
}
