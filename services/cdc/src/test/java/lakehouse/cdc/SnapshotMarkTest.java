package lakehouse.cdc;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ObjectOutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SnapshotMarkTest {
  @TempDir Path dir;

  @Test
  void snapshotEventsAreToldFromStreamedOnes() {
    assertTrue(SnapshotMark.fromSnapshot("{\"op\":\"r\",\"source\":{\"snapshot\":\"true\"}}"));
    assertTrue(SnapshotMark.fromSnapshot("{\"op\":\"r\",\"source\":{\"snapshot\":\"last\"}}"));
    assertTrue(
        SnapshotMark.fromSnapshot(
            "{\"schema\":{},\"payload\":{\"op\":\"r\",\"source\":{\"snapshot\":\"first\"}}}"));
    assertFalse(SnapshotMark.fromSnapshot("{\"op\":\"u\",\"source\":{\"snapshot\":\"false\"}}"));
    assertFalse(SnapshotMark.fromSnapshot("{\"op\":\"r\",\"source\":{\"snapshot\":\"incremental\"}}"));
    // A column named snapshot is not the source's.
    assertFalse(SnapshotMark.fromSnapshot("{\"op\":\"c\",\"after\":{\"snapshot\":\"true\"},\"source\":{}}"));
    assertFalse(SnapshotMark.fromSnapshot("{\"ts_ms\":1}")); // a heartbeat
    assertFalse(SnapshotMark.fromSnapshot(null));
  }

  static void writeOffsets(Path file, Map<byte[], byte[]> offsets) throws Exception {
    // As Kafka Connect's FileOffsetBackingStore writes them: one serialized map.
    try (ObjectOutputStream out = new ObjectOutputStream(Files.newOutputStream(file))) {
      out.writeObject(new HashMap<>(offsets));
    }
  }

  @Test
  void storedOffsetsAreReadFromTheEnginesFile() throws Exception {
    Path file = dir.resolve("offsets.dat");
    assertFalse(SnapshotMark.hasStoredOffsets(file));
    writeOffsets(file, Map.of());
    assertFalse(SnapshotMark.hasStoredOffsets(file));
    writeOffsets(file, Map.of("key".getBytes(), "{\"lsn\":1}".getBytes()));
    assertTrue(SnapshotMark.hasStoredOffsets(file));
  }

  @Test
  void theMarkIsSetOnceAndSeenByTheNextProcess() throws Exception {
    SnapshotMark mark = SnapshotMark.besideOffsets(dir.resolve("offsets.dat"));
    assertFalse(mark.isSet());
    mark.set();
    mark.set();
    assertTrue(SnapshotMark.besideOffsets(dir.resolve("offsets.dat")).isSet());
  }
}
