package lakehouse.cdc;

import java.io.IOException;
import java.io.InputStream;
import java.io.ObjectInputStream;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Map;

/**
 * A file that says "this service's initial snapshot was delivered to Kinesis in full and it
 * went on to stream changes from its replication slot", written (and synced) once the
 * snapshot's last event is in Kinesis, before the first streamed change is put.
 *
 * <p>Why: Debezium stores offsets only for events it was told are processed. A crash (or a
 * stop that interrupts the first batch) after some streamed changes reached Kinesis but
 * before any offset was stored would make the next start take a new snapshot. A snapshot
 * has no deletes: a row delivered by the first run and deleted before the second would stay
 * in the lake forever. With the mark and no stored offsets, the next start streams from the
 * slot instead (its position never moved without offsets, so it replays every change since
 * the first snapshot; the job's ordering by LSN absorbs the repeats).
 */
final class SnapshotMark {
  private final Path file;
  private volatile boolean set;

  SnapshotMark(Path file) {
    this.file = file;
    this.set = Files.exists(file);
  }

  static SnapshotMark besideOffsets(Path offsets) {
    return new SnapshotMark(offsets.resolveSibling("snapshot-delivered"));
  }

  Path file() {
    return file;
  }

  boolean isSet() {
    return set;
  }

  void set() throws IOException {
    if (set) {
      return;
    }
    Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
    try (FileChannel out =
        FileChannel.open(
            tmp, StandardOpenOption.CREATE, StandardOpenOption.WRITE, StandardOpenOption.TRUNCATE_EXISTING)) {
      out.write(
          StandardCharsets.UTF_8.encode(
              "The initial snapshot was delivered; a start without stored offsets streams from "
                  + "the replication slot instead of snapshotting again (lakehouse.cdc.SnapshotMark).\n"));
      out.force(true);
    }
    Files.move(tmp, file, java.nio.file.StandardCopyOption.ATOMIC_MOVE);
    set = true;
  }

  /**
   * Whether the engine's offsets file (Kafka Connect's FileOffsetBackingStore: one
   * serialized map) holds any offset. A missing or empty file holds none.
   */
  static boolean hasStoredOffsets(Path offsets) throws IOException {
    if (!Files.exists(offsets) || Files.size(offsets) == 0) {
      return false;
    }
    try (InputStream in = Files.newInputStream(offsets);
        ObjectInputStream objects = new ObjectInputStream(in)) {
      return !((Map<?, ?>) objects.readObject()).isEmpty();
    } catch (ClassNotFoundException | ClassCastException e) {
      throw new IOException("cannot read Debezium's offsets file " + offsets + ": " + e, e);
    }
  }
}
