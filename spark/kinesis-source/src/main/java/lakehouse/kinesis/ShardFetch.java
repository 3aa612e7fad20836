package lakehouse.kinesis;

import java.util.ArrayList;
import java.util.List;
import java.util.function.LongSupplier;

/**
 * The driver's bounded read of one shard for one micro-batch: pages until the budget is used, the
 * shard ends, its tip is reached, or the time allowance runs out. Each call asks for no more than
 * the remaining budget, so every record returned is consumed and the batch's end is simply the
 * last sequence number read.
 */
public final class ShardFetch {
  private ShardFetch() {}

  public static FetchResult fetch(RecordSource source, int budget, int maxRecordsPerCall,
      long deadlineMillis, LongSupplier clock) {
    List<KinesisRecord> records = new ArrayList<>();
    boolean drained = false;
    boolean caughtUp = false;
    while (records.size() < budget) {
      int request = Math.min(maxRecordsPerCall, budget - records.size());
      Page page = source.next(request);
      records.addAll(page.records);
      if (page.endOfShard) {
        drained = true;
        break;
      }
      if (page.reachedTip(request)) {
        caughtUp = true;
        break;
      }
      if (clock.getAsLong() >= deadlineMillis) {
        break;
      }
    }
    return new FetchResult(records, drained, caughtUp);
  }
}
