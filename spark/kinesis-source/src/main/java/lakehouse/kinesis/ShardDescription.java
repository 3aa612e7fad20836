package lakehouse.kinesis;

import java.util.ArrayList;
import java.util.List;

/** What ListShards says about one shard, reduced to what the lineage logic needs. */
public final class ShardDescription {
  public final String shardId;
  public final List<String> parentShardIds;
  /** Kinesis has closed the shard (split/merge): it has an ending sequence number. */
  public final boolean closed;

  public ShardDescription(String shardId, String parentShardId, String adjacentParentShardId,
      boolean closed) {
    this.shardId = shardId;
    List<String> parents = new ArrayList<>(2);
    if (parentShardId != null) {
      parents.add(parentShardId);
    }
    if (adjacentParentShardId != null) {
      parents.add(adjacentParentShardId);
    }
    this.parentShardIds = List.copyOf(parents);
    this.closed = closed;
  }
}
