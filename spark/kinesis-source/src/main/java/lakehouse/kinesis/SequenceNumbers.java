package lakehouse.kinesis;

import java.math.BigInteger;

/** Kinesis sequence numbers are decimal strings of up to 128 bits: compare them numerically. */
public final class SequenceNumbers {
  private SequenceNumbers() {}

  public static int compare(String a, String b) {
    return new BigInteger(a).compareTo(new BigInteger(b));
  }
}
