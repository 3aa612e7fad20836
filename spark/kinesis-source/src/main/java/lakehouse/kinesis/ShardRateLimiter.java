package lakehouse.kinesis;

import java.util.concurrent.ConcurrentHashMap;

/**
 * Keeps GetRecords calls on one shard at least {@code minIntervalMs} apart (Kinesis allows 5 per
 * second per shard). One instance per JVM, so the driver's fetches and, in local mode, the
 * executors' replays share the allowance.
 */
public final class ShardRateLimiter {
  private static final ShardRateLimiter GLOBAL = new ShardRateLimiter();

  private final ConcurrentHashMap<String, long[]> lastCallMillis = new ConcurrentHashMap<>();

  public static ShardRateLimiter global() {
    return GLOBAL;
  }

  /** Blocks until a call on {@code shardKey} is allowed, then records it. */
  public void acquire(String shardKey, long minIntervalMs) {
    long[] last = lastCallMillis.computeIfAbsent(shardKey, k -> new long[] {0L});
    synchronized (last) {
      long wait = last[0] + minIntervalMs - System.currentTimeMillis();
      Sleep.millis(wait);
      last[0] = System.currentTimeMillis();
    }
  }
}
