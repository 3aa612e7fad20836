package lakehouse.kinesis;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;

/**
 * How many records each shard may contribute to one micro-batch. Every shard is capped by
 * maxRecordsPerShard; a total cap (maxRecordsPerTrigger or Spark's ReadLimit) is split evenly, the
 * remainder going to shards in turn starting at {@code rotation}, so that a total smaller than the
 * number of shards does not starve the same shards every batch.
 */
public final class BatchBudget {
  private BatchBudget() {}

  /** Budgets for the given shards, in their order; shards with a zero budget are left out. */
  public static Map<String, Integer> allocate(List<String> shards, int maxRecordsPerShard,
      OptionalLong maxTotal, long rotation) {
    Map<String, Integer> budgets = new LinkedHashMap<>();
    int n = shards.size();
    if (n == 0) {
      return budgets;
    }
    long[] share = new long[n];
    if (maxTotal.isPresent()) {
      long total = maxTotal.getAsLong();
      long even = total / n;
      long remainder = total % n;
      int first = (int) Math.floorMod(rotation, (long) n);
      for (int i = 0; i < n; i++) {
        share[i] = even;
      }
      for (int k = 0; k < remainder; k++) {
        share[(first + k) % n]++;
      }
    } else {
      java.util.Arrays.fill(share, Long.MAX_VALUE);
    }
    for (int i = 0; i < n; i++) {
      int budget = (int) Math.min(share[i], maxRecordsPerShard);
      if (budget > 0) {
        budgets.put(shards.get(i), budget);
      }
    }
    return budgets;
  }
}
