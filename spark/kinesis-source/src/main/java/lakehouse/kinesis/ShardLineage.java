package lakehouse.kinesis;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Resharding rules, kept free of I/O. A child shard (from a split or a merge) is read only once
 * every parent still known is drained, which keeps per-key order across a reshard: all of a key's
 * records in the parent are consumed, in an earlier batch, before any in the child.
 */
public final class ShardLineage {
  private ShardLineage() {}

  /**
   * The offset of a query that has no checkpoint yet. LATEST means "only records that arrive from
   * now on", fixed as AT_TIMESTAMP of {@code nowMillis}: a LATEST iterator is not replayable, so a
   * crash before a shard's first record, or an idle shard's iterator expiring, would otherwise skip
   * whatever arrived in between. A closed shard gets no new records: it is drained at once.
   */
  public static StreamOffset initial(String streamName, List<ShardDescription> listed,
      KinesisOptions.StartingPosition start, long nowMillis) {
    List<ShardPosition> positions = new ArrayList<>();
    for (ShardDescription d : listed) {
      if (start == KinesisOptions.StartingPosition.TRIM_HORIZON) {
        positions.add(ShardPosition.trimHorizon(d.shardId, d.parentShardIds));
      } else if (d.closed) {
        positions.add(ShardPosition.drainedShard(d.shardId, d.parentShardIds));
      } else {
        positions.add(ShardPosition.atTimestamp(d.shardId, d.parentShardIds, nowMillis));
      }
    }
    return new StreamOffset(streamName, positions);
  }

  /**
   * Brings a checkpointed offset up to date with a fresh shard listing: shards new since then start
   * at TRIM_HORIZON (they are children of a reshard, or new capacity, and all their records are
   * new). A shard no longer listed is forgotten only if drained: it has aged out after being read
   * to its end. Any other keeps its position ({@link #unlisted}): one listing can miss a shard, and
   * a forgotten shard that shows up again would be re-read from TRIM_HORIZON; if it is really gone,
   * reading it fails loudly ({@link ShardCursor}) rather than skip its unread records.
   */
  public static StreamOffset reconcile(StreamOffset current, List<ShardDescription> listed) {
    Map<String, ShardDescription> byId = new HashMap<>();
    listed.forEach(d -> byId.put(d.shardId, d));
    List<ShardPosition> positions = new ArrayList<>();
    for (ShardPosition p : current.shards()) {
      if (byId.containsKey(p.shardId) || !p.drained) {
        positions.add(p);
      }
    }
    for (ShardDescription d : listed) {
      if (!current.contains(d.shardId)) {
        positions.add(ShardPosition.trimHorizon(d.shardId, d.parentShardIds));
      }
    }
    return new StreamOffset(current.streamName, current.streamIdentity, positions);
  }

  /** The shards of an offset that a listing does not show (after {@link #reconcile}: undrained). */
  public static List<String> unlisted(StreamOffset offset, List<ShardDescription> listed) {
    List<String> ids = new ArrayList<>();
    for (ShardPosition p : offset.shards()) {
      if (listed.stream().noneMatch(d -> d.shardId.equals(p.shardId))) {
        ids.add(p.shardId);
      }
    }
    return ids;
  }

  /**
   * Shards that may be read now, sorted by id: not drained, and every parent either drained or
   * unknown (it aged out before the query started, or was forgotten once drained).
   */
  public static List<String> readableShards(StreamOffset offset) {
    List<String> readable = new ArrayList<>();
    for (ShardPosition p : offset.shards()) {
      if (!p.drained && parentsDrained(offset, p)) {
        readable.add(p.shardId);
      }
    }
    return readable;
  }

  private static boolean parentsDrained(StreamOffset offset, ShardPosition p) {
    for (String parent : p.parentShardIds) {
      if (offset.get(parent).map(pp -> !pp.drained).orElse(false)) {
        return false;
      }
    }
    return true;
  }
}
