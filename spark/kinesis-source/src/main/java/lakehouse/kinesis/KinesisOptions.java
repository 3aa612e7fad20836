package lakehouse.kinesis;

import java.io.Serializable;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.OptionalLong;

/**
 * The source's options, parsed and validated once. Spark hands options over in a
 * case-insensitive map, so every key is looked up lower-cased. Serializable because
 * executors need the connection settings to re-read a range after a restart.
 */
public final class KinesisOptions implements Serializable {
  private static final long serialVersionUID = 1L;

  public enum StartingPosition { TRIM_HORIZON, LATEST }

  /** Kinesis' own ceiling for GetRecords' Limit parameter. */
  public static final int KINESIS_MAX_RECORDS_PER_CALL = 10_000;
  /** Kinesis allows 5 GetRecords calls per second per shard. */
  public static final long KINESIS_MIN_CALL_INTERVAL_MS = 200;

  /** The option as given: one stream's name, or several, comma-separated. */
  public final String streamName;
  /** The streams to read, in the given order, each once; {@link #forStream} gives one's options. */
  public final List<String> streamNames;
  public final String endpointUrl; // null: the SDK's regional endpoint
  public final String region;
  public final String accessKeyId; // null with secretKey null: default credential chain
  public final String secretKey;
  public final StartingPosition startingPosition;
  public final int maxRecordsPerCall;
  public final int maxRecordsPerShard;
  private final long maxRecordsPerTrigger; // 0: none (OptionalLong is not Serializable)
  public final long minCallIntervalMs;
  public final long maxFetchDurationMs;
  public final long inlineRecordsMaxBytes;
  /** Bytes one micro-batch reads in all (split over its shards): the driver holds them. */
  public final long maxBytesPerTrigger;
  /** How long GetShardIterator(AT_TIMESTAMP) may take before it is emulated (ArrivalScan). */
  public final long atTimestampTimeoutMs;
  /** Read the next batch while one is written, when a backlog waits ({@link ReadAhead}). */
  public final boolean readAhead;

  /** The lower-cased options, kept for {@link #forStream}. */
  private final HashMap<String, String> given;

  private KinesisOptions(HashMap<String, String> o) {
    given = o;
    streamName = o.get("streamname");
    if (streamName == null || streamName.isBlank()) {
      throw new IllegalArgumentException("The Kinesis source needs the option 'streamName' (the"
          + " name of the stream to read, or several names separated by commas).");
    }
    streamNames = parseStreamNames(streamName);
    endpointUrl = blankToNull(o.get("endpointurl"));
    region = o.getOrDefault("region", "us-east-1");
    String ak = blankToNull(o.get("awsaccesskeyid"));
    String sk = blankToNull(o.get("awssecretkey"));
    if ((ak == null) != (sk == null)) {
      throw new IllegalArgumentException(
          "Options 'awsAccessKeyId' and 'awsSecretKey' must be given together.");
    }
    // Emulators accept any key; a local endpoint without keys should just work. Only a
    // plain-HTTP endpoint is taken for an emulator: behind HTTPS may be AWS itself (or a
    // simulation of it) whose credentials come from the default provider chain.
    if (ak == null && endpointUrl != null && endpointUrl.startsWith("http://")) {
      ak = "test";
      sk = "test";
    }
    accessKeyId = ak;
    secretKey = sk;
    startingPosition = parseStartingPosition(o.getOrDefault("startingposition", "TRIM_HORIZON"));
    maxRecordsPerCall = (int) longOption(o, "maxRecordsPerCall", KINESIS_MAX_RECORDS_PER_CALL, 1,
        KINESIS_MAX_RECORDS_PER_CALL);
    maxRecordsPerShard = (int) longOption(o, "maxRecordsPerShard", 100_000, 1, Integer.MAX_VALUE);
    maxRecordsPerTrigger = longOption(o, "maxRecordsPerTrigger", 0, 1, Long.MAX_VALUE);
    minCallIntervalMs = longOption(o, "minGetRecordsIntervalMs", KINESIS_MIN_CALL_INTERVAL_MS,
        0, 60_000);
    maxFetchDurationMs = longOption(o, "maxFetchDurationMs", 10_000, 1, 3_600_000);
    inlineRecordsMaxBytes = longOption(o, "inlineRecordsMaxBytes", 64L << 20, 0, 1L << 30);
    maxBytesPerTrigger = longOption(o, "maxBytesPerTrigger", 128L << 20, 1L << 20, 16L << 30);
    atTimestampTimeoutMs = longOption(o, "atTimestampTimeoutMs", 3_000, 100, 600_000);
    readAhead = booleanOption(o, "readAhead", true);
  }

  public static KinesisOptions parse(Map<String, String> options) {
    HashMap<String, String> lower = new HashMap<>();
    options.forEach((k, v) -> lower.put(k.toLowerCase(Locale.ROOT), v));
    return new KinesisOptions(lower);
  }

  /** The same options for one stream: what each stream's reader and partitions use. */
  public KinesisOptions forStream(String name) {
    HashMap<String, String> one = new HashMap<>(given);
    one.put("streamname", name);
    return new KinesisOptions(one);
  }

  private static List<String> parseStreamNames(String value) {
    LinkedHashSet<String> names = new LinkedHashSet<>();
    for (String part : value.split(",")) {
      String name = part.trim();
      if (name.isEmpty()) {
        throw new IllegalArgumentException("Option 'streamName' has an empty name in '" + value
            + "': give stream names separated by single commas.");
      }
      if (!names.add(name)) {
        throw new IllegalArgumentException(
            "Option 'streamName' names stream '" + name + "' twice: '" + value + "'.");
      }
    }
    return new ArrayList<>(names);
  }

  public OptionalLong maxRecordsPerTrigger() {
    return maxRecordsPerTrigger > 0 ? OptionalLong.of(maxRecordsPerTrigger) : OptionalLong.empty();
  }

  /** Where to connect, for error messages. */
  public String endpointDescription() {
    return (endpointUrl != null ? endpointUrl : "the AWS endpoint") + " (region " + region + ")";
  }

  private static StartingPosition parseStartingPosition(String value) {
    try {
      return StartingPosition.valueOf(value.trim().toUpperCase(Locale.ROOT));
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("Option 'startingPosition' must be TRIM_HORIZON or LATEST, got '"
          + value + "'.");
    }
  }

  private static long longOption(Map<String, String> o, String name, long dflt, long min, long max) {
    String raw = o.get(name.toLowerCase(Locale.ROOT));
    if (raw == null) {
      return dflt;
    }
    long value;
    try {
      value = Long.parseLong(raw.trim());
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("Option '" + name + "' must be an integer, got '" + raw + "'.");
    }
    if (value < min || value > max) {
      throw new IllegalArgumentException(
          "Option '" + name + "' must be between " + min + " and " + max + ", got " + value + ".");
    }
    return value;
  }

  private static boolean booleanOption(Map<String, String> o, String name, boolean dflt) {
    String raw = o.get(name.toLowerCase(Locale.ROOT));
    if (raw == null) {
      return dflt;
    }
    String value = raw.trim().toLowerCase(Locale.ROOT);
    if (!value.equals("true") && !value.equals("false")) {
      throw new IllegalArgumentException(
          "Option '" + name + "' must be true or false, got '" + raw + "'.");
    }
    return value.equals("true");
  }

  private static String blankToNull(String s) {
    return s == null || s.isBlank() ? null : s.trim();
  }
}
