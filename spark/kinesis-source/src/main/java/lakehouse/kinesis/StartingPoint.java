package lakehouse.kinesis;

import java.io.Serializable;
import java.time.Instant;
import java.util.Objects;

/**
 * Where a shard iterator starts: the subset of GetShardIterator's types this source uses. Every one
 * of them is replayable (LATEST is not: it moves, so a query started at LATEST is fixed to
 * AT_TIMESTAMP of its start time instead).
 */
public final class StartingPoint implements Serializable {
  private static final long serialVersionUID = 2L;

  public enum Type { TRIM_HORIZON, AT_SEQUENCE_NUMBER, AFTER_SEQUENCE_NUMBER, AT_TIMESTAMP }

  public final Type type;
  public final String sequenceNumber; // only for the *_SEQUENCE_NUMBER types
  public final Long timestampMillis; // only for AT_TIMESTAMP

  private StartingPoint(Type type, String sequenceNumber, Long timestampMillis) {
    this.type = type;
    this.sequenceNumber = sequenceNumber;
    this.timestampMillis = timestampMillis;
  }

  public static StartingPoint trimHorizon() {
    return new StartingPoint(Type.TRIM_HORIZON, null, null);
  }

  public static StartingPoint atSequence(String seq) {
    return new StartingPoint(Type.AT_SEQUENCE_NUMBER, Objects.requireNonNull(seq), null);
  }

  public static StartingPoint afterSequence(String seq) {
    return new StartingPoint(Type.AFTER_SEQUENCE_NUMBER, Objects.requireNonNull(seq), null);
  }

  /** The first record whose ApproximateArrivalTimestamp is at or after this time (epoch ms). */
  public static StartingPoint atTimestamp(long epochMillis) {
    return new StartingPoint(Type.AT_TIMESTAMP, null, epochMillis);
  }

  /** Stable text form, used as a cache key. */
  public String key() {
    if (sequenceNumber != null) {
      return type.name() + ":" + sequenceNumber;
    }
    return timestampMillis != null ? type.name() + ":" + timestampMillis : type.name();
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof StartingPoint && key().equals(((StartingPoint) o).key());
  }

  @Override
  public int hashCode() {
    return key().hashCode();
  }

  @Override
  public String toString() {
    return timestampMillis != null
        ? type.name() + ":" + Instant.ofEpochMilli(timestampMillis) : key();
  }
}
