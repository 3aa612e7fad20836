package lakehouse.cdc;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Which tables' existing rows the lake has, kept beside the offsets
 * ({@code capture-state.json}).
 *
 * <p>Why: Debezium snapshots once per connector. A table added to {@code table.include.list}
 * later is only streamed from the restart on, and its existing rows never reach the lake.
 * The service compares the include list with the tables recorded here at every start: a
 * table not recorded gets an incremental snapshot (a signal, see CdcService), recorded once
 * its scan is delivered; a table recorded and no longer included is forgotten, so adding
 * it back snapshots it again (with the rows deleted meanwhile deleted, IncrementalKeys).
 *
 * <p>{@code pending} maps each table waiting for its rows to the id of the signal that asked
 * for them (empty until sent: a signal is committed before its id is recorded, so a crash in
 * between sends it again, which only snapshots the table twice). {@code initialSnapshot}
 * false (written by {@code lakehouse cdc reset}): a start without offsets streams from a new
 * slot at once and every table comes by an incremental snapshot, which can reconcile the
 * rows already in the lake, where an initial snapshot cannot.
 */
final class CaptureState {
  static final String FILE = "capture-state.json";
  private static final ObjectMapper JSON = new ObjectMapper();

  private final Path file;
  private final Set<String> captured = new LinkedHashSet<>();
  private final Map<String, String> pending = new LinkedHashMap<>();
  /** Pending tables whose last scan failed, with Debezium's status: asked for again at start. */
  private final Map<String, String> failed = new LinkedHashMap<>();
  private boolean initialSnapshot = true;
  private long lsnShift;
  private final boolean existed;

  private CaptureState(Path file) throws IOException {
    this.file = file;
    this.existed = Files.exists(file);
    if (!existed) {
      return;
    }
    JsonNode root;
    try {
      root = JSON.readTree(Files.readString(file, StandardCharsets.UTF_8));
    } catch (IOException e) {
      throw new IOException(
          "cannot read " + file + " (which tables' rows were delivered): " + e.getMessage()
              + ". Restore it, or run `lakehouse cdc reset` to snapshot every table again.",
          e);
    }
    root.path("captured").forEach(t -> captured.add(t.asText()));
    root.path("pending").fields().forEachRemaining(e -> pending.put(e.getKey(), e.getValue().asText()));
    root.path("failed").fields().forEachRemaining(e -> failed.put(e.getKey(), e.getValue().asText()));
    initialSnapshot = root.path("initial_snapshot").asBoolean(true);
    lsnShift = root.path("lsn_shift").asLong(0);
  }

  static CaptureState besideOffsets(Path offsets) throws IOException {
    return new CaptureState(offsets.toAbsolutePath().resolveSibling(FILE));
  }

  Path file() {
    return file;
  }

  boolean existed() {
    return existed;
  }

  /** Whether a start without offsets takes Debezium's initial snapshot (false after a reset). */
  synchronized boolean initialSnapshot() {
    return initialSnapshot;
  }

  /**
   * What the service adds to every event's log position: 0, unless a reset found the
   * server's positions behind the lake's (a new or restored cluster; see CdcService).
   */
  synchronized long lsnShift() {
    return lsnShift;
  }

  synchronized void lsnShift(long shift) throws IOException {
    lsnShift = shift;
    save();
  }

  synchronized Set<String> captured() {
    return Set.copyOf(captured);
  }

  /** The tables waiting for their rows, in the order they were added. */
  synchronized List<String> pending() {
    return new ArrayList<>(pending.keySet());
  }

  synchronized boolean isPending(String table) {
    return pending.containsKey(table);
  }

  synchronized Map<String, String> failed() {
    return Map.copyOf(failed);
  }

  /** A table's scan failed: it stays pending, and the next start asks for it again. */
  synchronized void failed(String table, String status) throws IOException {
    if (pending.containsKey(table)) {
      pending.put(table, "");
      failed.put(table, status);
      save();
    }
  }

  /** Pending tables whose signal is not sent yet. */
  synchronized List<String> unsignalled() {
    List<String> tables = new ArrayList<>();
    pending.forEach((table, signal) -> {
      if (signal.isEmpty()) {
        tables.add(table);
      }
    });
    return tables;
  }

  /** What changed between the recorded tables and this start's include list. */
  record Plan(List<String> added, List<String> removed) {}

  /**
   * Brings the record up to this start's include list: tables no longer included are
   * forgotten (and named), included ones neither captured nor pending become pending,
   * unless this start's initial snapshot reads them. Saved.
   */
  synchronized Plan plan(Collection<String> include, boolean initialSnapshotRuns)
      throws IOException {
    List<String> removed = new ArrayList<>();
    for (Iterator<String> it = captured.iterator(); it.hasNext(); ) {
      String table = it.next();
      if (!include.contains(table)) {
        it.remove();
        removed.add(table);
      }
    }
    for (Iterator<String> it = pending.keySet().iterator(); it.hasNext(); ) {
      String table = it.next();
      if (!include.contains(table)) {
        it.remove();
        removed.add(table);
      }
    }
    failed.keySet().retainAll(pending.keySet());
    List<String> added = new ArrayList<>();
    if (!initialSnapshotRuns) {
      for (String table : include) {
        if (!captured.contains(table) && !pending.containsKey(table)) {
          pending.put(table, "");
          added.add(table);
        }
      }
    }
    save();
    return new Plan(added, removed);
  }

  /** Before the first start that keeps this record: the tables the offsets already cover. */
  synchronized void assumeCaptured(Collection<String> tables) throws IOException {
    captured.addAll(tables);
    save();
  }

  synchronized void signalled(Collection<String> tables, String signalId) throws IOException {
    for (String table : tables) {
      if (pending.containsKey(table)) {
        pending.put(table, signalId);
      }
    }
    save();
  }

  /** The initial snapshot delivered: every table it read has its rows. */
  synchronized void initialSnapshotDelivered(Collection<String> tables) throws IOException {
    for (String table : tables) {
      if (!pending.containsKey(table)) {
        captured.add(table);
      }
    }
    save();
  }

  /** A table's incremental snapshot delivered, its vanished rows deleted. */
  synchronized void delivered(String table) throws IOException {
    pending.remove(table);
    failed.remove(table);
    captured.add(table);
    save();
  }

  /** Written to a temporary file, synced, then moved over the record. */
  synchronized void save() throws IOException {
    ObjectNode root = JSON.createObjectNode();
    root.put("initial_snapshot", initialSnapshot);
    root.put("lsn_shift", lsnShift);
    captured.forEach(root.putArray("captured")::add);
    ObjectNode signals = root.putObject("pending");
    pending.forEach(signals::put);
    ObjectNode failures = root.putObject("failed");
    failed.forEach(failures::put);
    Files.createDirectories(file.getParent());
    Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
    try (FileChannel out =
        FileChannel.open(
            tmp, StandardOpenOption.CREATE, StandardOpenOption.WRITE, StandardOpenOption.TRUNCATE_EXISTING)) {
      out.write(StandardCharsets.UTF_8.encode(JSON.writerWithDefaultPrettyPrinter().writeValueAsString(root) + "\n"));
      out.force(true);
    }
    Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
  }
}
