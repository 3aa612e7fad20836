package lakehouse.kinesis;

import java.util.List;

/** One GetRecords answer. */
public final class Page {
  public final List<KinesisRecord> records;
  /** No NextShardIterator: the shard is closed and this was its last page. */
  public final boolean endOfShard;
  /** MillisBehindLatest, or null when the endpoint did not say. */
  public final Long millisBehindLatest;

  public Page(List<KinesisRecord> records, boolean endOfShard, Long millisBehindLatest) {
    this.records = List.copyOf(records);
    this.endOfShard = endOfShard;
    this.millisBehindLatest = millisBehindLatest;
  }

  /**
   * Whether this page reached the tip of an open shard. An empty page at the tip, or a short page
   * with MillisBehindLatest 0, means so. A full page does not, even with MillisBehindLatest 0:
   * some emulators (kinesalite) always report 0. An empty page that is still behind is a gap in a
   * sparse shard, and reading must go on.
   */
  public boolean reachedTip(int requested) {
    boolean atTip = millisBehindLatest == null || millisBehindLatest == 0;
    return atTip && (records.isEmpty() || records.size() < requested);
  }
}
