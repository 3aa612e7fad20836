package lakehouse.kinesis;

import java.util.ArrayList;
import java.util.List;
import java.util.function.LongSupplier;

/**
 * The driver's bounded read of one shard for one micro-batch: pages until the record budget or
 * the byte budget is used, the shard ends, its tip is reached, or the time allowance runs out. Each call asks for no more than
 * the remaining budget, so every record returned is consumed and the batch's end is simply the
 * last sequence number read.
 */
public final class ShardFetch {
  private ShardFetch() {}

  public static FetchResult fetch(RecordSource source, int budget, int maxRecordsPerCall,
      long deadlineMillis, LongSupplier clock) {
    return fetch(source, budget, Long.MAX_VALUE, maxRecordsPerCall, deadlineMillis, clock);
  }

  /**
   * {@code maxBytes} bounds what the driver holds for this shard: a page is taken whole, so the
   * result can pass it by at most one page (Kinesis answers at most 10 MB a call).
   */
  public static FetchResult fetch(RecordSource source, int budget, long maxBytes,
      int maxRecordsPerCall, long deadlineMillis, LongSupplier clock) {
    return fetch(source, budget, maxBytes, maxRecordsPerCall, deadlineMillis, clock, false);
  }

  /**
   * {@code closed}: the shard listing shows the shard closed (by a split or a merge). Then no page
   * means its tip: only the end of the shard (no next iterator) does, so reading goes on past
   * empty pages until then, within the budgets. Kinesis may answer an empty page with a next
   * iterator between a closed shard's last record and its end (kinesalite does, when the last
   * record came seconds before the reshard); taking that page for the tip would leave the shard
   * undrained for good, and its children, which hold the newer records, unread.
   */
  public static FetchResult fetch(RecordSource source, int budget, long maxBytes,
      int maxRecordsPerCall, long deadlineMillis, LongSupplier clock, boolean closed) {
    List<KinesisRecord> records = new ArrayList<>();
    boolean drained = false;
    boolean caughtUp = false;
    long bytes = 0;
    Long behind = null;
    while (records.size() < budget && bytes < maxBytes) {
      int request = Math.min(maxRecordsPerCall, budget - records.size());
      Page page = source.next(request);
      records.addAll(page.records);
      for (KinesisRecord r : page.records) {
        bytes += r.approximateBytes();
      }
      behind = page.millisBehindLatest;
      if (page.endOfShard) {
        drained = true;
        break;
      }
      if (!closed && page.reachedTip(request)) {
        caughtUp = true;
        break;
      }
      if (clock.getAsLong() >= deadlineMillis) {
        break;
      }
    }
    return new FetchResult(records, drained, caughtUp, behind);
  }
}
