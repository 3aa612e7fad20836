package lakehouse.cdc;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.debezium.engine.ChangeEvent;
import java.io.BufferedReader;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The deletes an incremental snapshot cannot carry: rows the lake holds for a table that
 * the database no longer has when the table is snapshotted again (captured, removed from
 * CDC_TABLES, rows deleted meanwhile, added back; or every table after {@code lakehouse cdc
 * reset}, whose old slot lost the deletes).
 *
 * <p>Before a table's snapshot starts, the keys live in its stream are folded from the stream
 * itself (the stream is what the lake is made of: each key's change with the highest log
 * position decides, as in the job). From then on every key of an event put to the table's
 * stream, snapshot read or streamed change, is appended to a file and synced before it is
 * put. When Debezium says the table's scan is complete, every key live before and not
 * seen since gets a delete: the scan reads every row the table has, and a row changed
 * during the scan has a streamed event, so a key seen in neither is gone from the database.
 * A restart during the scan folds the stream again (now with some of the scan's events)
 * and keeps the file: the keys seen are still seen.
 */
final class IncrementalKeys {
  private static final Logger LOG = LoggerFactory.getLogger(IncrementalKeys.class);
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String PREFIX = "incremental-keys-";
  /**
   * The keys the lake's live view held when `lakehouse cdc reset` ran (its position, a tab,
   * the key's JSON, a line each): a reset reads them from Trino because the stream may no
   * longer hold them (a local Kinesis engine keeps streams in memory only; a real one
   * trims them after its retention).
   */
  static final String LAKE_PREFIX = "lake-keys-";

  /** Reads every record of a stream from its trim horizon: (partition key, data) each. */
  @FunctionalInterface
  interface StreamReader {
    void read(String stream, BiConsumer<String, String> record) throws IOException;
  }

  /** The keys live in a stream, by each key's change with the highest log position. */
  static final class Fold {
    private final Map<String, Long> lsn = new HashMap<>();
    private final Set<String> live = new HashSet<>();
    private long hashed;
    private long maxLsn = Long.MIN_VALUE;

    /**
     * One record, in stream order (a key's records share a shard, which keeps their order;
     * equal positions: the later one wins, as in the job).
     */
    void add(String partitionKey, String data) {
      JsonNode event;
      try {
        event = JSON.readTree(data);
      } catch (IOException notJson) {
        return;
      }
      JsonNode payload = event.path("payload").isObject() ? event.path("payload") : event;
      String op = payload.path("op").asText("");
      JsonNode position = payload.path("source").path("lsn");
      if (op.isEmpty() || !position.canConvertToLong()) {
        return;
      }
      if (partitionKey == null || !partitionKey.startsWith("{")) {
        hashed++; // a key longer than Kinesis' 256 characters, put as its digest
        return;
      }
      long at = position.asLong();
      maxLsn = Math.max(maxLsn, at);
      Long before = lsn.get(partitionKey);
      if (before != null && before > at) {
        return;
      }
      lsn.put(partitionKey, at);
      if ("d".equals(op)) {
        live.remove(partitionKey);
      } else {
        live.add(partitionKey);
      }
    }

    /** Each live key with the position of its last change. */
    Map<String, Long> live() {
      Map<String, Long> keys = new HashMap<>();
      for (String key : live) {
        keys.put(key, lsn.get(key));
      }
      return keys;
    }

    long hashedKeys() {
      return hashed;
    }

    long maxLsn() {
      return maxLsn;
    }
  }

  private final Path dir;
  private final String topicPrefix;
  private final StreamReader reader;
  /** Table -> its keys live in the lake before its snapshot (key -> last position). */
  private final Map<String, Map<String, Long>> before = new HashMap<>();
  /** Stream -> table, of the tables being snapshotted. */
  private final Map<String, String> tracked = new HashMap<>();
  private final Map<String, FileChannel> files = new HashMap<>();

  IncrementalKeys(Path dir, String topicPrefix, StreamReader reader) {
    this.dir = dir;
    this.topicPrefix = topicPrefix;
    this.reader = reader;
  }

  String streamOf(String table) {
    return topicPrefix + "." + table;
  }

  /**
   * The table's keys live in its stream now: called before any of its snapshot is put.
   * Returns the highest log position the stream holds (Long.MIN_VALUE when empty).
   */
  synchronized long begin(String table) throws IOException {
    String stream = streamOf(table);
    Fold fold = new Fold();
    reader.read(stream, fold::add);
    if (fold.hashedKeys() > 0) {
      LOG.warn(
          "{}: {} records have a key longer than 256 characters (put under its digest): a row "
              + "of such a key deleted while the table was not captured stays in the lake",
          table,
          fold.hashedKeys());
    }
    Map<String, Long> live = new HashMap<>();
    fold.live().forEach((key, lsn) -> live.merge(canonical(key), lsn, Math::max));
    long newest = fold.maxLsn();
    Path lake = dir.resolve(LAKE_PREFIX + table);
    if (Files.exists(lake)) {
      long[] found = {0, newest};
      forEachLine(
          lake,
          line -> {
            int tab = line.indexOf('\t');
            if (tab > 0) {
              long lsn = Long.parseLong(line.substring(0, tab));
              live.merge(canonical(line.substring(tab + 1)), lsn, Math::max);
              found[0]++;
              found[1] = Math.max(found[1], lsn);
            }
          });
      newest = found[1];
      LOG.info("{}: {} rows live in the lake's view when the capture was reset", table, found[0]);
    }
    before.put(table, live);
    tracked.put(stream, table);
    LOG.info(
        "{}: {} rows live in stream {} before its snapshot; those the snapshot does not find "
            + "get a delete when it completes",
        table,
        live.size(),
        stream);
    return newest;
  }

  /**
   * A key's JSON with its fields in name order, so that Debezium's keys and those read from
   * the lake compare equal whatever their field order and spacing.
   */
  static String canonical(String key) {
    try {
      JsonNode node = JSON.readTree(key);
      if (!node.isObject()) {
        return key;
      }
      java.util.TreeMap<String, JsonNode> fields = new java.util.TreeMap<>();
      node.fields().forEachRemaining(e -> fields.put(e.getKey(), e.getValue()));
      com.fasterxml.jackson.databind.node.ObjectNode sorted = JSON.createObjectNode();
      fields.forEach(sorted::set);
      return JSON.writeValueAsString(sorted);
    } catch (IOException notJson) {
      return key;
    }
  }

  /** A table newly waiting for its rows: keys seen by an earlier, abandoned attempt forgotten. */
  void forget(String table) throws IOException {
    Files.deleteIfExists(fileOf(table));
  }

  synchronized boolean anyTracked() {
    return !tracked.isEmpty();
  }

  synchronized boolean tracking(String stream) {
    return tracked.containsKey(stream);
  }

  Path fileOf(String table) {
    return dir.resolve(PREFIX + table);
  }

  /** The keys of the events about to be put to a tracked stream, appended and synced. */
  synchronized void record(List<ChangeEvent<String, String>> events) throws IOException {
    Map<String, StringBuilder> lines = new HashMap<>();
    for (ChangeEvent<String, String> event : events) {
      String table = tracked.get(event.destination());
      if (table != null && event.key() != null && event.value() != null) {
        lines.computeIfAbsent(table, t -> new StringBuilder()).append(event.key()).append('\n');
      }
    }
    for (Map.Entry<String, StringBuilder> entry : lines.entrySet()) {
      FileChannel out = files.get(entry.getKey());
      if (out == null) {
        out =
            FileChannel.open(
                fileOf(entry.getKey()),
                StandardOpenOption.CREATE,
                StandardOpenOption.WRITE,
                StandardOpenOption.APPEND);
        files.put(entry.getKey(), out);
      }
      ByteBuffer bytes = StandardCharsets.UTF_8.encode(entry.getValue().toString());
      while (bytes.hasRemaining()) {
        out.write(bytes);
      }
      out.force(false);
    }
  }

  /**
   * The table's scan is delivered: a delete for each key live before and not seen since,
   * dated after both that key's last change and {@code lsnNow} (the newest position put).
   */
  synchronized List<ChangeEvent<String, String>> deletesForVanishedRows(
      String table, long lsnNow, long tsMs) throws IOException {
    Map<String, Long> live = before.getOrDefault(table, Map.of());
    Set<String> seen = new HashSet<>();
    forEachLine(fileOf(table), line -> seen.add(canonical(line)));
    List<ChangeEvent<String, String>> deletes = new ArrayList<>();
    for (Map.Entry<String, Long> key : live.entrySet()) {
      if (!seen.contains(key.getKey())) {
        long at = Math.max(lsnNow, key.getValue() + 1);
        deletes.add(
            SnapshotKeys.deleteEvent(
                streamOf(table),
                key.getKey(),
                at,
                tsMs,
                "in the lake, absent from the table's incremental snapshot"));
      }
    }
    LOG.info(
        "{}: snapshot delivered; {} of the {} rows the lake held are gone from the database: "
            + "a delete event each",
        table,
        deletes.size(),
        live.size());
    return deletes;
  }

  /** The table's bookkeeping dropped once its deletes are put and it is recorded captured. */
  synchronized void done(String table) throws IOException {
    String stream = streamOf(table);
    tracked.remove(stream);
    before.remove(table);
    FileChannel out = files.remove(table);
    if (out != null) {
      out.close();
    }
    Files.deleteIfExists(fileOf(table));
    Files.deleteIfExists(dir.resolve(LAKE_PREFIX + table));
  }

  /** Each line (one cut by a crash before its put matches no key). */
  private static void forEachLine(Path file, Consumer<String> handler) throws IOException {
    if (!Files.exists(file)) {
      return;
    }
    try (BufferedReader in = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
      String line = in.readLine();
      while (line != null) {
        String next = in.readLine();
        if (!line.isEmpty()) {
          handler.accept(line);
        }
        line = next;
      }
    }
  }
}
