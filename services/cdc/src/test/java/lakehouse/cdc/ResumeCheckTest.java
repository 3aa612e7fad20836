package lakehouse.cdc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ResumeCheckTest {
  @TempDir Path dir;

  @Test
  void positionsAreWrittenAsPostgresDoes() {
    assertEquals("0/16B3748", ResumeCheck.lsnText(0x16B3748L));
    assertEquals("1/0", ResumeCheck.lsnText(1L << 32));
  }

  @Test
  void theStoredPositionIsDebeziumsLastCompletelyProcessedOne() throws Exception {
    Path offsets = dir.resolve("offsets.dat");
    assertNull(ResumeCheck.storedLsn(offsets));
    SnapshotMarkTest.writeOffsets(
        offsets,
        Map.of(
            "[\"lakehouse-cdc\",{\"server\":\"p\"}]".getBytes(),
            "{\"lsn_proc\":200,\"lsn\":190,\"txId\":7}".getBytes()));
    assertEquals(200L, ResumeCheck.storedLsn(offsets));
    SnapshotMarkTest.writeOffsets(offsets, Map.of("k".getBytes(), "{\"lsn\":190}".getBytes()));
    assertEquals(190L, ResumeCheck.storedLsn(offsets));
  }

  @Test
  void withoutAProcessedPositionOnlyTheSlotsExistenceCounts() {
    Path offsets = dir.resolve("offsets.dat");
    ResumeCheck.Slot later = new ResumeCheck.Slot("s", true, 0x2000000L, "shop");
    assertNull(ResumeCheck.problem("shop", "db:5432", later, 0x16B3748L, false, offsets));
    assertEquals(
        "slot_missing",
        ResumeCheck.problem("shop", "db:5432", new ResumeCheck.Slot("s", false, null, null), 1L, false, offsets)
            .reason);
  }

  @Test
  void aMissingOrRecreatedSlotIsNamedWithTheDatabaseAndPosition() {
    Path offsets = dir.resolve("offsets.dat");
    ResumeCheck.CannotResume missing =
        ResumeCheck.problem(
            "shop", "db:5432", new ResumeCheck.Slot("lakehouse_cdc", false, null, null), 0x16B3748L, offsets);
    assertEquals("slot_missing", missing.reason);
    for (String named : new String[] {"'shop'", "db:5432", "'lakehouse_cdc'", "0/16B3748", "lakehouse cdc reset"}) {
      assertTrue(missing.getMessage().contains(named), missing.getMessage());
    }
    ResumeCheck.CannotResume recreated =
        ResumeCheck.problem(
            "shop", "db:5432", new ResumeCheck.Slot("lakehouse_cdc", true, 0x2000000L, "shop"), 0x16B3748L, offsets);
    assertEquals("position_gone", recreated.reason);
    assertTrue(recreated.getMessage().contains("starts at 0/2000000"), recreated.getMessage());
    ResumeCheck.CannotResume elsewhere =
        ResumeCheck.problem(
            "shop", "db:5432", new ResumeCheck.Slot("lakehouse_cdc", true, 1L, "other"), 0x16B3748L, offsets);
    assertEquals("slot_elsewhere", elsewhere.reason);
  }

  @Test
  void aSlotAtOrBeforeTheStoredPositionResumes() {
    Path offsets = dir.resolve("offsets.dat");
    assertNull(
        ResumeCheck.problem(
            "shop", "db:5432", new ResumeCheck.Slot("s", true, 0x16B3748L, "shop"), 0x16B3748L, offsets));
    assertNull(
        ResumeCheck.problem("shop", "db:5432", new ResumeCheck.Slot("s", true, 10L, "shop"), 0x16B3748L, offsets));
  }

  @Test
  void theErrorIsWrittenForTheCliAndClearedByAStartThatResumes() throws Exception {
    Path offsets = dir.resolve("offsets.dat");
    ResumeCheck.CannotResume error =
        ResumeCheck.problem("shop", "db:5432", new ResumeCheck.Slot("s", false, null, null), 5L, offsets);
    ResumeCheck.writeError(offsets, error, "shop", "db:5432", "s", 5L);
    JsonNode written = new ObjectMapper().readTree(dir.resolve(ResumeCheck.ERROR_FILE).toFile());
    assertEquals("0/5", written.get("stored_position").asText());
    assertEquals("s", written.get("slot").asText());
    assertEquals(error.getMessage(), written.get("message").asText());
    ResumeCheck.clearError(offsets);
    assertFalse(Files.exists(dir.resolve(ResumeCheck.ERROR_FILE)));
  }

  @Test
  void debeziumsOwnWordsForALostPositionAreRecognised() {
    Exception cause = new IllegalStateException(
        "Saved offset LSN{0/16B3748} is no longer available on the server. Reconfigure the "
            + "connector to use a snapshot mode when needed");
    assertTrue(ResumeCheck.positionGone(new RuntimeException("task failed", cause), "stopped"));
    assertFalse(ResumeCheck.positionGone(new RuntimeException("connection refused"), "stopped"));
  }
}
