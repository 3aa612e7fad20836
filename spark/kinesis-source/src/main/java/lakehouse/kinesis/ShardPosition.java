package lakehouse.kinesis;

import java.io.Serializable;
import java.util.List;
import java.util.Objects;

/**
 * How far the query has consumed one shard: the unit of the checkpointed offset.
 *
 * <p>{@code lastSequenceNumber} is the last record consumed (null: none yet, so reading starts at
 * TRIM_HORIZON, or at LATEST when {@code startAtLatest}). {@code drained} means the shard is closed
 * and every record of it has been consumed, which is what lets its children be read.
 * {@code firstSequenceNumber} is only set in the batch that first consumes a LATEST-started shard:
 * it anchors that batch's range so a replay can re-read it exactly (LATEST itself moves).
 */
public final class ShardPosition implements Serializable {
  private static final long serialVersionUID = 1L;

  public final String shardId;
  public final List<String> parentShardIds;
  public final String lastSequenceNumber;
  public final boolean startAtLatest;
  public final String firstSequenceNumber;
  public final boolean drained;

  public ShardPosition(String shardId, List<String> parentShardIds, String lastSequenceNumber,
      boolean startAtLatest, String firstSequenceNumber, boolean drained) {
    this.shardId = Objects.requireNonNull(shardId, "shardId");
    this.parentShardIds = List.copyOf(parentShardIds);
    this.lastSequenceNumber = lastSequenceNumber;
    this.startAtLatest = startAtLatest && lastSequenceNumber == null;
    this.firstSequenceNumber = firstSequenceNumber;
    this.drained = drained;
  }

  /** A shard nothing has been read from, to be read from TRIM_HORIZON. */
  public static ShardPosition trimHorizon(String shardId, List<String> parents) {
    return new ShardPosition(shardId, parents, null, false, null, false);
  }

  /** An open shard at query start under startingPosition=LATEST. */
  public static ShardPosition latest(String shardId, List<String> parents) {
    return new ShardPosition(shardId, parents, null, true, null, false);
  }

  /** A shard that needs no reading (e.g. closed before a LATEST query started). */
  public static ShardPosition drainedShard(String shardId, List<String> parents) {
    return new ShardPosition(shardId, parents, null, false, null, true);
  }

  /** The position after consuming records first..last from this position. */
  public ShardPosition consumedThrough(String firstSeq, String lastSeq) {
    return new ShardPosition(shardId, parentShardIds, lastSeq, false,
        startAtLatest ? firstSeq : null, drained);
  }

  public ShardPosition asDrained() {
    return new ShardPosition(shardId, parentShardIds, lastSequenceNumber, startAtLatest,
        firstSequenceNumber, true);
  }

  /** Where to continue reading from this position (for the driver's next fetch). */
  public StartingPoint nextReadStart() {
    if (lastSequenceNumber != null) {
      return StartingPoint.afterSequence(lastSequenceNumber);
    }
    return startAtLatest ? StartingPoint.latest() : StartingPoint.trimHorizon();
  }

  /**
   * Where the range (this, end] begins, as a replayable starting point. Differs from
   * {@link #nextReadStart()} only for LATEST, which is not replayable: the end position's
   * first consumed sequence number is used instead.
   */
  public StartingPoint rangeStartTowards(ShardPosition end) {
    if (lastSequenceNumber == null && startAtLatest) {
      if (end.firstSequenceNumber == null) {
        throw new IllegalStateException("Offset of shard " + shardId
            + " started at LATEST but the end offset has no firstSequenceNumber");
      }
      return StartingPoint.atSequence(end.firstSequenceNumber);
    }
    return nextReadStart();
  }

  @Override
  public boolean equals(Object o) {
    if (!(o instanceof ShardPosition)) {
      return false;
    }
    ShardPosition p = (ShardPosition) o;
    return shardId.equals(p.shardId) && parentShardIds.equals(p.parentShardIds)
        && Objects.equals(lastSequenceNumber, p.lastSequenceNumber)
        && startAtLatest == p.startAtLatest
        && Objects.equals(firstSequenceNumber, p.firstSequenceNumber) && drained == p.drained;
  }

  @Override
  public int hashCode() {
    return Objects.hash(shardId, lastSequenceNumber, drained);
  }

  @Override
  public String toString() {
    return shardId + "@" + (lastSequenceNumber != null ? lastSequenceNumber
        : startAtLatest ? "LATEST" : "TRIM_HORIZON") + (drained ? "(drained)" : "");
  }
}
