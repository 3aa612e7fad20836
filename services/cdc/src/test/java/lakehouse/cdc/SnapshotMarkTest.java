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
