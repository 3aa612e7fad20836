package lakehouse.kinesis;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Amazon's aggregated record format, as the Kinesis Producer Library, the Kinesis Agent and Fluent
 * Bit's aggregation write it: the magic bytes F3 89 9A C2, a protobuf {@code AggregatedRecord}
 * (1: repeated string partition_key_table, 2: repeated string explicit_hash_key_table, 3: repeated
 * Record {1: uint64 partition_key_index, 2: optional uint64 explicit_hash_key_index, 3: bytes
 * data, 4: repeated Tag}), then the MD5 of the protobuf. One Kinesis record then carries many user
 * records, each with its own partition key; the KCL hands them out one by one, and so does this
 * source.
 *
 * <p>A record that starts with the magic bytes but is not a whole, intact aggregate is reported
 * as corrupt rather than passed on as one opaque record (it could never be valid UTF-8 JSON: the
 * fourth magic byte cannot follow the first three in UTF-8), so the quarantine can say why.
 */
public final class KplAggregate {
  private KplAggregate() {}

  static final byte[] MAGIC = {(byte) 0xF3, (byte) 0x89, (byte) 0x9A, (byte) 0xC2};
  static final int DIGEST_BYTES = 16;

  /** One user record of an aggregate. */
  public static final class UserRecord {
    public final String partitionKey;
    public final String explicitHashKey; // null when the producer set none
    public final byte[] data;

    UserRecord(String partitionKey, String explicitHashKey, byte[] data) {
      this.partitionKey = partitionKey;
      this.explicitHashKey = explicitHashKey;
      this.data = data;
    }
  }

  /** Why an aggregate cannot be read; the text goes into the quarantine's reason. */
  public static final class CorruptAggregateException extends Exception {
    private static final long serialVersionUID = 1L;

    CorruptAggregateException(String reason) {
      super(reason);
    }
  }

  public static boolean isAggregate(byte[] data) {
    if (data == null || data.length < MAGIC.length) {
      return false;
    }
    for (int i = 0; i < MAGIC.length; i++) {
      if (data[i] != MAGIC[i]) {
        return false;
      }
    }
    return true;
  }

  /** The user records of an aggregate ({@link #isAggregate} must hold), in their order. */
  public static List<UserRecord> deaggregate(byte[] data) throws CorruptAggregateException {
    int bodyEnd = data.length - DIGEST_BYTES;
    if (bodyEnd <= MAGIC.length) {
      throw new CorruptAggregateException(
          "truncated: " + data.length + " bytes, too short for a body and its MD5");
    }
    byte[] digest = md5(data, MAGIC.length, bodyEnd - MAGIC.length);
    if (!Arrays.equals(digest, Arrays.copyOfRange(data, bodyEnd, data.length))) {
      throw new CorruptAggregateException("MD5 mismatch (changed or truncated body)");
    }
    List<String> partitionKeys = new ArrayList<>();
    List<String> hashKeys = new ArrayList<>();
    List<byte[]> records = new ArrayList<>();
    try {
      Protobuf body = new Protobuf(data, MAGIC.length, bodyEnd);
      while (body.hasMore()) {
        int tag = body.varint32();
        switch (tag) {
          case (1 << 3) | 2:
            partitionKeys.add(body.string());
            break;
          case (2 << 3) | 2:
            hashKeys.add(body.string());
            break;
          case (3 << 3) | 2:
            records.add(body.bytes());
            break;
          default:
            body.skip(tag);
        }
      }
    } catch (IndexOutOfBoundsException | IllegalArgumentException e) {
      throw new CorruptAggregateException("invalid protobuf body: " + e.getMessage());
    }
    if (records.isEmpty()) {
      throw new CorruptAggregateException("holds no user record");
    }
    List<UserRecord> out = new ArrayList<>(records.size());
    for (int i = 0; i < records.size(); i++) {
      out.add(userRecord(records.get(i), i, partitionKeys, hashKeys));
    }
    return out;
  }

  private static UserRecord userRecord(byte[] record, int index, List<String> partitionKeys,
      List<String> hashKeys) throws CorruptAggregateException {
    Long keyIndex = null;
    Long hashIndex = null;
    byte[] payload = null;
    try {
      Protobuf fields = new Protobuf(record, 0, record.length);
      while (fields.hasMore()) {
        int tag = fields.varint32();
        switch (tag) {
          case (1 << 3):
            keyIndex = fields.varint64();
            break;
          case (2 << 3):
            hashIndex = fields.varint64();
            break;
          case (3 << 3) | 2:
            payload = fields.bytes();
            break;
          default:
            fields.skip(tag);
        }
      }
    } catch (IndexOutOfBoundsException | IllegalArgumentException e) {
      throw new CorruptAggregateException(
          "invalid protobuf in user record " + index + ": " + e.getMessage());
    }
    if (keyIndex == null || payload == null) {
      throw new CorruptAggregateException("user record " + index + " lacks "
          + (keyIndex == null ? "its partition key index" : "its data"));
    }
    return new UserRecord(lookup(partitionKeys, keyIndex, "partition key", index),
        hashIndex == null ? null : lookup(hashKeys, hashIndex, "explicit hash key", index),
        payload);
  }

  private static String lookup(List<String> table, long index, String what, int record)
      throws CorruptAggregateException {
    if (index < 0 || index >= table.size()) {
      throw new CorruptAggregateException("user record " + record + ": " + what + " index "
          + index + " outside its table of " + table.size());
    }
    return table.get((int) index);
  }

  static byte[] md5(byte[] data, int offset, int length) {
    try {
      MessageDigest md5 = MessageDigest.getInstance("MD5");
      md5.update(data, offset, length);
      return md5.digest();
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("every JDK has MD5", e);
    }
  }

  /** The few protobuf wire-format reads the two messages need; errors are unchecked. */
  private static final class Protobuf {
    private final byte[] buf;
    private int pos;
    private final int end;

    Protobuf(byte[] buf, int start, int end) {
      this.buf = buf;
      this.pos = start;
      this.end = end;
    }

    boolean hasMore() {
      return pos < end;
    }

    long varint64() {
      long value = 0;
      for (int shift = 0; shift < 64; shift += 7) {
        if (pos >= end) {
          throw new IndexOutOfBoundsException("varint runs past the end");
        }
        byte b = buf[pos++];
        value |= (long) (b & 0x7F) << shift;
        if ((b & 0x80) == 0) {
          return value;
        }
      }
      throw new IllegalArgumentException("varint longer than 10 bytes");
    }

    int varint32() {
      long value = varint64();
      if (value < 0 || value > Integer.MAX_VALUE) {
        throw new IllegalArgumentException("field tag " + value + " out of range");
      }
      return (int) value;
    }

    byte[] bytes() {
      long length = varint64();
      if (length < 0 || length > end - pos) {
        throw new IndexOutOfBoundsException(
            "a field of " + length + " bytes runs past the end (" + (end - pos) + " left)");
      }
      byte[] out = Arrays.copyOfRange(buf, pos, pos + (int) length);
      pos += (int) length;
      return out;
    }

    String string() {
      return new String(bytes(), StandardCharsets.UTF_8);
    }

    void skip(int tag) {
      switch (tag & 7) {
        case 0:
          varint64();
          break;
        case 1:
          advance(8);
          break;
        case 2:
          bytes();
          break;
        case 5:
          advance(4);
          break;
        default:
          throw new IllegalArgumentException("unknown wire type " + (tag & 7) + " (tag " + tag
              + ")");
      }
    }

    private void advance(int n) {
      if (n > end - pos) {
        throw new IndexOutOfBoundsException("a fixed field runs past the end");
      }
      pos += n;
    }
  }
}
