package lakehouse.kinesis;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Records the driver read while deciding a batch's end, kept until the batch commits, so the batch
 * is not read twice. Keyed by (shard, range start); an entry is valid only for the range end it was
 * read up to, which planInputPartitions checks against the offset log's end.
 */
final class RecordCache {
  private static final class Entry {
    final String shardId;
    final FetchResult result;

    Entry(String shardId, FetchResult result) {
      this.shardId = shardId;
      this.result = result;
    }
  }

  private final Map<String, Entry> entries = new ConcurrentHashMap<>();

  private static String key(String shardId, StartingPoint from) {
    return shardId + "|" + from.key();
  }

  void put(String shardId, StartingPoint from, FetchResult result) {
    entries.put(key(shardId, from), new Entry(shardId, result));
  }

  /** The cached records of exactly (from, endSequenceNumber], or null. */
  FetchResult get(String shardId, StartingPoint from, String endSequenceNumber) {
    Entry e = entries.get(key(shardId, from));
    return e != null && endSequenceNumber.equals(e.result.lastSequenceNumber()) ? e.result : null;
  }

  /**
   * Frees the records of committed batches: those ending at or before the committed position.
   * (Spark commits batch N-1 after planning batch N's end, so batch N's entries must survive.)
   */
  void evictCommitted(StreamOffset committed) {
    entries.values().removeIf(e -> committed.get(e.shardId)
        .map(p -> p.lastSequenceNumber != null && SequenceNumbers.compare(
            e.result.lastSequenceNumber(), p.lastSequenceNumber) <= 0)
        .orElse(true));
  }

  void clear() {
    entries.clear();
  }

  int size() {
    return entries.size();
  }
}
