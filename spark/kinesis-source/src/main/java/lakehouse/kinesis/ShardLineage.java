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

  /** The offset of a query that has no checkpoint yet. */
  public static StreamOffset initial(String streamName, List<ShardDescription> listed,
      KinesisOptions.StartingPosition start) {
    List<ShardPosition> positions = new ArrayList<>();
    for (ShardDescription d : listed) {
      if (start == KinesisOptions.StartingPosition.TRIM_HORIZON) {
        positions.add(ShardPosition.trimHorizon(d.shardId, d.parentShardIds));
      } else if (d.closed) {
        // LATEST means "only records that arrive from now on": a closed shard gets none.
        positions.add(ShardPosition.drainedShard(d.shardId, d.parentShardIds));
      } else {
        positions.add(ShardPosition.latest(d.shardId, d.parentShardIds));
      }
    }
    return new StreamOffset(streamName, positions);
  }

  /**
   * Brings a checkpointed offset up to date with a fresh shard listing: shards new since then start
   * at TRIM_HORIZON (they are children of a reshard, or new capacity, and all their records are
   * new); shards no longer listed have aged out of retention and are forgotten.
   */
  public static StreamOffset reconcile(StreamOffset current, List<ShardDescription> listed) {
    Map<String, ShardDescription> byId = new HashMap<>();
    listed.forEach(d -> byId.put(d.shardId, d));
    List<ShardPosition> positions = new ArrayList<>();
    for (ShardPosition p : current.shards()) {
      if (byId.containsKey(p.shardId)) {
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

  /**
   * Shards that may be read now, sorted by id: not drained, and every parent either drained or
   * unknown (expired from the stream, so nothing of it can be read any more).
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
