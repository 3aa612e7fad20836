package lakehouse.cdc;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.debezium.engine.ChangeEvent;
import java.io.IOException;
import java.io.BufferedReader;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.SeekableByteChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.stream.LongStream;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The row keys each attempt at the initial snapshot delivered, one file per attempt beside the
 * offsets, so that a snapshot completing after cut ones deletes the rows they delivered and it
 * no longer finds.
 *
 * <p>Why: Debezium cannot resume a snapshot; a service stopped or killed during its initial
 * snapshot snapshots again at its next start. A snapshot has no deletes, so a row the cut
 * attempt delivered and that was deleted before the new attempt would stay live in the lake.
 * Each attempt's keys are appended and synced before its events are put; when a snapshot
 * completes, a delete event is put for every key an earlier attempt delivered and this one
 * did not. It is dated at this snapshot's log position: later than anything the cut attempts
 * delivered, earlier than any change made after this snapshot (a row inserted again wins).
 * Then the earlier attempts' files are removed. The complete snapshot's own file stays: a
 * snapshot taken again before its completion reached the stored offsets compares with it.
 */
final class SnapshotKeys {
  private static final Logger LOG = LoggerFactory.getLogger(SnapshotKeys.class);
  private static final String PREFIX = "snapshot-keys-";
  private static final ObjectMapper JSON = new ObjectMapper();

  private final List<Path> earlier;
  private final Path current;
  private final Set<String> captured;
  private FileChannel out;
  private long recorded;
  private long lsn = Long.MIN_VALUE;
  private long tsMs;

  /** `captured`: the streams of the tables captured now (a key of another is left alone). */
  SnapshotKeys(Path dir, Set<String> captured) throws IOException {
    this.captured = Set.copyOf(captured);
    Files.createDirectories(dir);
    List<Path> found = new ArrayList<>();
    int last = 0;
    try (Stream<Path> files = Files.list(dir)) {
      for (Path file : (Iterable<Path>) files::iterator) {
        String name = file.getFileName().toString();
        if (name.startsWith(PREFIX) && name.substring(PREFIX.length()).matches("[0-9]+")) {
          found.add(file);
          last = Math.max(last, Integer.parseInt(name.substring(PREFIX.length())));
        }
      }
    }
    this.earlier = List.copyOf(found);
    this.current = dir.resolve(PREFIX + (last + 1));
  }

  static SnapshotKeys besideOffsets(Path offsets, Set<String> captured) throws IOException {
    return new SnapshotKeys(offsets.toAbsolutePath().getParent(), captured);
  }

  /** Whether this process delivered snapshot events. */
  boolean delivering() {
    return recorded > 0;
  }

  /** The keys of snapshot events about to be put, appended and synced first. */
  void record(List<ChangeEvent<String, String>> events, List<EventSource> sources)
      throws IOException {
    StringBuilder lines = new StringBuilder();
    for (int i = 0; i < events.size(); i++) {
      ChangeEvent<String, String> event = events.get(i);
      EventSource source = sources.get(i);
      if (source.lsn() != null && source.lsn() >= lsn) {
        lsn = source.lsn();
        tsMs = source.tsMs() != null ? source.tsMs() : System.currentTimeMillis();
      }
      if (event.key() != null && event.value() != null && source.fromSnapshot()) {
        // JSON text escapes tabs and line ends: a line is one key.
        lines.append(event.destination()).append('\t').append(event.key()).append('\n');
        recorded++;
      }
    }
    if (lines.isEmpty()) {
      return;
    }
    if (out == null) {
      out =
          FileChannel.open(
              current, StandardOpenOption.CREATE, StandardOpenOption.WRITE, StandardOpenOption.APPEND);
    }
    ByteBuffer bytes = StandardCharsets.UTF_8.encode(lines.toString());
    while (bytes.hasRemaining()) {
      out.write(bytes);
    }
    out.force(false);
  }

  /**
   * Delete events for the keys an earlier attempt delivered and this snapshot did not, in
   * Debezium's JSON (the key's columns as {@code before}); none when there was no earlier
   * attempt or this process took no snapshot.
   */
  List<ChangeEvent<String, String>> deletesForVanishedRows() throws IOException {
    if (earlier.isEmpty() || !delivering() || lsn == Long.MIN_VALUE) {
      return List.of();
    }
    // This snapshot's keys as sorted 64-bit digests (8 bytes a row in the service's small
    // heap); the earlier files are streamed. A digest collision can only keep a row, never
    // delete one that this snapshot found.
    long[] found = digests(current);
    Set<Long> seen = new HashSet<>();
    List<ChangeEvent<String, String>> deletes = new ArrayList<>();
    for (Path file : earlier) {
      forEachLine(
          file,
          line -> {
            long digest = digest(line);
            int tab = line.indexOf('\t');
            String destination = line.substring(0, tab);
            // A table no longer captured (CDC_TABLES changed) was not read by this snapshot.
            if (Arrays.binarySearch(found, digest) < 0
                && captured.contains(destination)
                && seen.add(digest)) {
              deletes.add(delete(destination, line.substring(tab + 1)));
            }
          });
    }
    LOG.info(
        "the snapshot is complete; an earlier, cut attempt ({}) delivered {} rows it no longer "
            + "finds: a delete event each, at lsn {}",
        earlier,
        deletes.size(),
        lsn);
    return deletes;
  }

  private ChangeEvent<String, String> delete(String destination, String key) throws IOException {
    return deleteEvent(
        destination, key, lsn, tsMs, "delivered by a cut snapshot, absent from the complete one at this lsn");
  }

  /**
   * A delete event in Debezium's JSON for a row the lake holds and the database no longer
   * has: the key's columns as {@code before}, dated at {@code lsn} (what the job orders a
   * key's changes by), {@code reason} in its source block for whoever reads the stream.
   */
  static ChangeEvent<String, String> deleteEvent(
      String destination, String key, long lsn, long tsMs, String reason) throws IOException {
    JsonNode keyNode = JSON.readTree(key);
    JsonNode payload = keyNode.path("payload");
    ObjectNode event = JSON.createObjectNode();
    event.set("before", keyNode.has("schema") && payload.isObject() ? payload : keyNode);
    event.putNull("after");
    ObjectNode source = event.putObject("source");
    source.put("connector", "lakehouse-cdc");
    source.put("snapshot", "false");
    source.put("lsn", lsn);
    source.put("ts_ms", tsMs);
    source.put("reason", reason);
    event.put("op", "d");
    event.put("ts_ms", System.currentTimeMillis());
    String value = JSON.writeValueAsString(event);
    return new ChangeEvent<>() {
      public String key() {
        return key;
      }

      public String value() {
        return value;
      }

      public String destination() {
        return destination;
      }

      public Integer partition() {
        return null;
      }
    };
  }

  /**
   * The earlier attempts' files removed, once this snapshot's deletes are in Kinesis; kept
   * when this process took no snapshot (they are what the next snapshot compares with).
   */
  void forgetEarlier() throws IOException {
    if (!delivering()) {
      return;
    }
    for (Path file : earlier) {
      Files.deleteIfExists(file);
    }
  }

  /** A line handler that may fail on a key it cannot read. */
  @FunctionalInterface
  private interface LineHandler {
    void accept(String line) throws IOException;
  }

  /** Each whole line of `file`; a last line a crash cut short (no line end) was never put. */
  private static void forEachLine(Path file, LineHandler handler) throws IOException {
    if (!Files.exists(file) || Files.size(file) == 0) {
      return;
    }
    boolean whole;
    try (SeekableByteChannel in = Files.newByteChannel(file)) {
      ByteBuffer last = ByteBuffer.allocate(1);
      in.position(in.size() - 1).read(last);
      whole = last.get(0) == '\n';
    }
    try (BufferedReader in = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
      String line = in.readLine();
      while (line != null) {
        String next = in.readLine();
        if ((next != null || whole) && line.indexOf('\t') > 0) {
          handler.accept(line);
        }
        line = next;
      }
    }
  }

  private static long[] digests(Path file) throws IOException {
    LongStream.Builder digests = LongStream.builder();
    forEachLine(file, line -> digests.add(digest(line)));
    return digests.build().sorted().toArray();
  }

  /** The first 8 bytes of the line's SHA-256. */
  static long digest(String line) {
    try {
      byte[] hash = MessageDigest.getInstance("SHA-256").digest(line.getBytes(StandardCharsets.UTF_8));
      return ByteBuffer.wrap(hash).getLong();
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is missing from this JVM", e);
    }
  }
}
