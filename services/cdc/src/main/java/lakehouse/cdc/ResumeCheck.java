package lakehouse.cdc;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.InputStream;
import java.io.ObjectInputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Map;

/**
 * Whether the stored position can still be read from the server, checked before the engine
 * starts, and what to tell the user when it cannot.
 *
 * <p>Why: Debezium finds out itself, but as a stack trace ("... is no longer available on the
 * server. Reconfigure the connector to use a snapshot mode when needed") followed by the
 * engine's own shutdown errors, and names neither the slot nor the position. The test is
 * Debezium's (PostgresConnection.validateLogPosition): the slot must exist and must not
 * have moved past the stored position. A database recreated, restored from a backup, a new
 * cluster behind the same address, or the slot dropped by hand all fail it; the changes
 * made since the stored position are then lost to the capture, and only a new slot and a
 * new snapshot (with the lake's vanished rows deleted) start it over: {@code lakehouse cdc
 * reset}. The message is also written to {@code capture-error.json} beside the offsets,
 * which {@code lakehouse up --cdc} and {@code lakehouse status} print.
 */
final class ResumeCheck {
  static final String ERROR_FILE = "capture-error.json";
  private static final ObjectMapper JSON = new ObjectMapper();

  /** Why the capture cannot go on, in words; the service exits with EXIT_CODE. */
  static final class CannotResume extends Exception {
    static final int EXIT_CODE = 3;
    final String reason;

    CannotResume(String reason, String message) {
      super(message);
      this.reason = reason;
    }
  }

  /** The slot as the server has it; null restartLsn when the slot does not exist. */
  record Slot(String name, boolean exists, Long restartLsn, String database) {}

  private ResumeCheck() {}

  /** A log position as PostgreSQL writes it: 0/16B3748. */
  static String lsnText(long lsn) {
    return String.format("%X/%X", lsn >>> 32, lsn & 0xFFFFFFFFL);
  }

  /**
   * The position the engine resumes from, read from its offsets file (Kafka Connect's
   * FileOffsetBackingStore: a serialized map of JSON texts): lsn_proc, Debezium's last
   * completely processed position, else lsn. Null when none is stored.
   */
  static Long storedLsn(Path offsets) throws IOException {
    Long[] both = storedPositions(offsets);
    return both == null ? null : both[0] != null ? both[0] : both[1];
  }

  /**
   * Debezium's last completely processed position (lsn_proc, what it checks against the
   * slot) and its last position (lsn), either null when absent; null when none is stored.
   */
  static Long[] storedPositions(Path offsets) throws IOException {
    if (!Files.exists(offsets) || Files.size(offsets) == 0) {
      return null;
    }
    Map<?, ?> stored;
    try (InputStream in = Files.newInputStream(offsets);
        ObjectInputStream objects = new ObjectInputStream(in)) {
      stored = (Map<?, ?>) objects.readObject();
    } catch (ClassNotFoundException | ClassCastException e) {
      throw new IOException("cannot read Debezium's offsets file " + offsets + ": " + e, e);
    }
    for (Object value : stored.values()) {
      if (!(value instanceof byte[] bytes)) {
        continue;
      }
      JsonNode offset = JSON.readTree(new String(bytes, StandardCharsets.UTF_8));
      Long processed = offset.path("lsn_proc").canConvertToLong() ? offset.path("lsn_proc").asLong() : null;
      Long lsn = offset.path("lsn").canConvertToLong() ? offset.path("lsn").asLong() : null;
      if (processed != null || lsn != null) {
        return new Long[] {processed, lsn};
      }
    }
    return null;
  }

  /**
   * What stops the capture from resuming at `stored` from `slot` in `database`, or null when
   * it can. `where` is host:port.
   */
  static CannotResume problem(String database, String where, Slot slot, long stored, Path offsets) {
    return problem(database, where, slot, stored, true, offsets);
  }

  /** `processed`: `stored` is Debezium's last completely processed position, which the slot
   * must not have passed (else only the slot's existence is checked, as Debezium does). */
  static CannotResume problem(
      String database, String where, Slot slot, long stored, boolean processed, Path offsets) {
    String position = lsnText(stored);
    String cause;
    String reason;
    if (!slot.exists()) {
      reason = "slot_missing";
      cause = "replication slot '" + slot.name() + "' does not exist in database '" + database
          + "' on " + where + " (the database was recreated or restored, a new server answers "
          + "at that address, or the slot was dropped)";
    } else if (slot.database() != null && !slot.database().equals(database)) {
      reason = "slot_elsewhere";
      cause = "replication slot '" + slot.name() + "' on " + where + " belongs to database '"
          + slot.database() + "', not '" + database + "'";
    } else if (processed && slot.restartLsn() != null && slot.restartLsn() > stored) {
      reason = "position_gone";
      cause = "replication slot '" + slot.name() + "' in database '" + database + "' on " + where
          + " starts at " + lsnText(slot.restartLsn()) + ", past the stored position (the slot "
          + "was dropped and created again)";
    } else {
      return null;
    }
    return new CannotResume(
        reason,
        "the CDC capture cannot resume: it stopped at log position " + position + " (stored in "
            + offsets + "), and " + cause + ". The changes made since " + position + " cannot be "
            + "read any more, so the lake may miss them. To start the capture over: "
            + "`lakehouse cdc reset` (a new replication slot, then every table in CDC_TABLES "
            + "snapshotted again while changes stream, and the rows the lake holds that the "
            + "database no longer has deleted).");
  }

  /** The error for `lakehouse up --cdc` and `lakehouse status`, written beside the offsets. */
  static void writeError(
      Path offsets, CannotResume error, String database, String where, String slot, Long stored)
      throws IOException {
    ObjectNode root = JSON.createObjectNode();
    root.put("reason", error.reason);
    root.put("message", error.getMessage());
    root.put("database", database);
    root.put("server", where);
    root.put("slot", slot);
    root.put("stored_position", stored == null ? null : lsnText(stored));
    root.put("at_ms", System.currentTimeMillis());
    Path file = offsets.toAbsolutePath().resolveSibling(ERROR_FILE);
    Path tmp = file.resolveSibling(ERROR_FILE + ".tmp");
    Files.writeString(tmp, JSON.writerWithDefaultPrettyPrinter().writeValueAsString(root) + "\n");
    Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
  }

  /** A start that resumed (or needs no position) clears an earlier start's error. */
  static void clearError(Path offsets) throws IOException {
    Files.deleteIfExists(offsets.toAbsolutePath().resolveSibling(ERROR_FILE));
  }

  /** Whether an engine failure is Debezium's own "position no longer available". */
  static boolean positionGone(Throwable error, String message) {
    String text = message == null ? "" : message;
    for (Throwable t = error; t != null; t = t.getCause()) {
      text += " " + t.getMessage();
    }
    return text.contains("no longer available on the server");
  }
}
