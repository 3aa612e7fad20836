package lakehouse.kinesis;

import java.io.Serializable;
import java.util.List;
import java.util.Objects;

/**
 * How far the query has consumed one shard: the unit of the checkpointed offset.
 *
 * <p>{@code lastSequenceNumber} is the last record consumed. While it is null (nothing consumed
 * yet) reading starts at {@code startTimestampMillis} when set (AT_TIMESTAMP: a query started at
 * LATEST is fixed to its start time, so a restart or an expired iterator reads from the same record
 * on), else at TRIM_HORIZON. {@code drained} means the shard is closed and every record of it has
 * been consumed, which is what lets its children be read. {@code lastArrivalMillis} is the last
 * consumed record's ApproximateArrivalTimestamp (null when unknown, e.g. in offsets written before
 * it was kept): records after it can only have aged out unread once it is older than the stream's
 * retention.
 */
public final class ShardPosition implements Serializable {
  private static final long serialVersionUID = 2L;

  public final String shardId;
  public final List<String> parentShardIds;
  public final String lastSequenceNumber;
  public final Long lastArrivalMillis;
  public final Long startTimestampMillis;
  public final boolean drained;

  public ShardPosition(String shardId, List<String> parentShardIds, String lastSequenceNumber,
      Long lastArrivalMillis, Long startTimestampMillis, boolean drained) {
    this.shardId = Objects.requireNonNull(shardId, "shardId");
    this.parentShardIds = List.copyOf(parentShardIds);
    this.lastSequenceNumber = lastSequenceNumber;
    this.lastArrivalMillis = lastSequenceNumber == null ? null : lastArrivalMillis;
    this.startTimestampMillis = lastSequenceNumber == null ? startTimestampMillis : null;
    this.drained = drained;
  }

  /** A shard nothing has been read from, to be read from TRIM_HORIZON. */
  public static ShardPosition trimHorizon(String shardId, List<String> parents) {
    return new ShardPosition(shardId, parents, null, null, null, false);
  }

  /** An open shard of a query started at LATEST: read from the query's start time on. */
  public static ShardPosition atTimestamp(String shardId, List<String> parents, long epochMillis) {
    return new ShardPosition(shardId, parents, null, null, epochMillis, false);
  }

  /** A shard that needs no reading (e.g. closed before a LATEST query started). */
  public static ShardPosition drainedShard(String shardId, List<String> parents) {
    return new ShardPosition(shardId, parents, null, null, null, true);
  }

  /** The position after consuming records up to {@code lastSeq}, which arrived at that time. */
  public ShardPosition consumedThrough(String lastSeq, Long arrivalMillis) {
    return new ShardPosition(shardId, parentShardIds, Objects.requireNonNull(lastSeq),
        arrivalMillis, null, drained);
  }

  public ShardPosition asDrained() {
    return new ShardPosition(shardId, parentShardIds, lastSequenceNumber, lastArrivalMillis,
        startTimestampMillis, true);
  }

  /**
   * Where to continue reading from this position: for the driver's next fetch, and as the start of
   * the range (this, end] that a replay re-reads.
   */
  public StartingPoint nextReadStart() {
    if (lastSequenceNumber != null) {
      return StartingPoint.afterSequence(lastSequenceNumber);
    }
    return startTimestampMillis != null
        ? StartingPoint.atTimestamp(startTimestampMillis) : StartingPoint.trimHorizon();
  }

  /**
   * The arrival time that every unread record of this shard is at or after, when known: the last
   * consumed record's, or the start time of a LATEST query that has consumed nothing yet.
   */
  public Long unreadSinceMillis() {
    return lastSequenceNumber != null ? lastArrivalMillis : startTimestampMillis;
  }

  @Override
  public boolean equals(Object o) {
    if (!(o instanceof ShardPosition)) {
      return false;
    }
    ShardPosition p = (ShardPosition) o;
    return shardId.equals(p.shardId) && parentShardIds.equals(p.parentShardIds)
        && Objects.equals(lastSequenceNumber, p.lastSequenceNumber)
        && Objects.equals(lastArrivalMillis, p.lastArrivalMillis)
        && Objects.equals(startTimestampMillis, p.startTimestampMillis) && drained == p.drained;
  }

  @Override
  public int hashCode() {
    return Objects.hash(shardId, lastSequenceNumber, drained);
  }

  @Override
  public String toString() {
    String at = lastSequenceNumber != null ? lastSequenceNumber
        : startTimestampMillis != null ? StartingPoint.atTimestamp(startTimestampMillis).toString()
        : "TRIM_HORIZON";
    return shardId + "@" + at + (drained ? "(drained)" : "");
  }
}
