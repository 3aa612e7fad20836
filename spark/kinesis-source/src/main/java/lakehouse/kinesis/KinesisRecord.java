package lakehouse.kinesis;

import java.io.Serializable;

/** One Kinesis record, detached from the SDK so it can travel inside an input partition. */
public final class KinesisRecord implements Serializable {
  private static final long serialVersionUID = 1L;

  public final byte[] data;
  public final String partitionKey;
  public final String sequenceNumber;
  public final long approximateArrivalMillis;

  public KinesisRecord(byte[] data, String partitionKey, String sequenceNumber,
      long approximateArrivalMillis) {
    this.data = data;
    this.partitionKey = partitionKey;
    this.sequenceNumber = sequenceNumber;
    this.approximateArrivalMillis = approximateArrivalMillis;
  }

  /** Rough in-memory size, used to decide whether a batch is small enough to ship inline. */
  public long approximateBytes() {
    return data.length + 2L * (partitionKey.length() + sequenceNumber.length()) + 64;
  }
}
