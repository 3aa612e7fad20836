package lakehouse.kinesis;

import java.io.Serializable;
import java.util.Objects;

/** Where a shard iterator starts: the subset of GetShardIterator's types this source uses. */
public final class StartingPoint implements Serializable {
  private static final long serialVersionUID = 1L;

  public enum Type { TRIM_HORIZON, LATEST, AT_SEQUENCE_NUMBER, AFTER_SEQUENCE_NUMBER }

  public final Type type;
  public final String sequenceNumber; // only for the *_SEQUENCE_NUMBER types

  private StartingPoint(Type type, String sequenceNumber) {
    this.type = type;
    this.sequenceNumber = sequenceNumber;
  }

  public static StartingPoint trimHorizon() {
    return new StartingPoint(Type.TRIM_HORIZON, null);
  }

  public static StartingPoint latest() {
    return new StartingPoint(Type.LATEST, null);
  }

  public static StartingPoint atSequence(String seq) {
    return new StartingPoint(Type.AT_SEQUENCE_NUMBER, Objects.requireNonNull(seq));
  }

  public static StartingPoint afterSequence(String seq) {
    return new StartingPoint(Type.AFTER_SEQUENCE_NUMBER, Objects.requireNonNull(seq));
  }

  /** Stable text form, used as a cache key. */
  public String key() {
    return sequenceNumber == null ? type.name() : type.name() + ":" + sequenceNumber;
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
    return key();
  }
}
