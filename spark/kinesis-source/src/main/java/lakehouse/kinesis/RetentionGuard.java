package lakehouse.kinesis;

import java.time.Instant;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Kinesis deletes records older than the stream's retention whether they were read or not. This
 * judges each shard read against it: a WARN once the shard's oldest unread record is half the
 * retention old, and a failure once it is at or past the retention and the reader is not gaining
 * on it, when records are aging out unread (a short batch or an idle query cannot tell).
 */
final class RetentionGuard {
  private static final Logger LOG = LoggerFactory.getLogger(RetentionGuard.class);

  private final String streamName;
  private final long retentionMillis;
  /** Each shard's lag at its previous read in this run: whether the reader gains on the horizon. */
  private final Map<String, Long> previousLag = new ConcurrentHashMap<>();
  private final Set<String> warned = ConcurrentHashMap.newKeySet();
  private final Set<String> seen = ConcurrentHashMap.newKeySet();

  RetentionGuard(String streamName, long retentionMillis) {
    this.streamName = streamName;
    this.retentionMillis = retentionMillis;
  }

  /**
   * Before a shard's first read in this run. While a query runs it reads every shard again and
   * again, so records can only have aged out unread in between runs, and only if the time its
   * unread records arrived from is older than the retention. An idle shard looks the same and
   * lost nothing, so this warns rather than fails.
   */
  void beforeFirstRead(ShardPosition from, long nowMillis) {
    Long since = from.unreadSinceMillis();
    if (!seen.add(from.shardId) || since == null || nowMillis - since < retentionMillis) {
      return;
    }
    LOG.warn("Kinesis shard {} of '{}' has unread records only from {} on ({} ago), longer ago"
        + " than the stream's retention ({}): any record that arrived on it after that and aged out"
        + " before this run is gone. The checkpoint cannot tell that from a shard that received"
        + " nothing meanwhile, which lost nothing; compare with what the producers sent if records"
        + " may be missing.", from.shardId, streamName, Instant.ofEpochMilli(since),
        duration(nowMillis - since), duration(retentionMillis));
  }

  /**
   * After a read that started at {@code from} and was {@code lagMillis} behind
   * ({@link FetchResult#lagMillis}). A read from TRIM_HORIZON starts at the retention horizon by
   * definition, so it is judged from its shard's next read on.
   *
   * @throws IllegalStateException when the shard's unread records are aging out
   */
  void afterRead(ShardPosition from, long lagMillis) {
    Long previous = previousLag.put(from.shardId, lagMillis);
    boolean fromTrimHorizon = from.lastSequenceNumber == null && from.startTimestampMillis == null;
    boolean gaining = previous != null && lagMillis < previous;
    if (lagMillis >= retentionMillis && !fromTrimHorizon && !gaining) {
      throw new IllegalStateException("Kinesis shard " + from.shardId + " of stream '" + streamName
          + "' is " + duration(lagMillis) + " behind (its oldest unread record arrived that long"
          + " ago), at or past the stream's retention of " + duration(retentionMillis)
          + ", and the job is not catching up: Kinesis deletes records that old whether they were"
          + " read or not, so records are being lost unread. Scale the job (more executors and"
          + " cores, a higher maxRecordsPerShard / maxBytesPerTrigger) or raise the stream's"
          + " retention (IncreaseStreamRetentionPeriod), then restart it; to accept the loss and"
          + " go on, start from a new checkpoint location.");
    }
    if (lagMillis >= retentionMillis / 2) {
      if (warned.add(from.shardId)) {
        LOG.warn("Kinesis shard {} of '{}' is {} behind, {} of the stream's retention ({}): at"
            + " the retention its unread records age out and the job fails. Scale the job or"
            + " raise the retention before then.", from.shardId, streamName, duration(lagMillis),
            lagMillis >= retentionMillis ? "past all" : "over half", duration(retentionMillis));
      }
    } else {
      warned.remove(from.shardId);
    }
  }

  static String duration(long millis) {
    long s = millis / 1000;
    return s >= 3600 ? String.format(Locale.ROOT, "%dh%02dm", s / 3600, s / 60 % 60)
        : s >= 60 ? String.format(Locale.ROOT, "%dm%02ds", s / 60, s % 60)
        : String.format(Locale.ROOT, "%.1fs", millis / 1e3);
  }
}
