package lakehouse.cdc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CaptureStateTest {
  @TempDir Path dir;

  CaptureState state() throws Exception {
    return CaptureState.besideOffsets(dir.resolve("offsets.dat"));
  }

  @Test
  void theInitialSnapshotRecordsItsTablesAndALaterTableIsPending() throws Exception {
    CaptureState first = state();
    assertFalse(first.existed());
    assertEquals(List.of(), first.plan(List.of("public.customers"), true).added());
    first.initialSnapshotDelivered(List.of("public.customers"));

    CaptureState.Plan plan = state().plan(List.of("public.customers", "public.orders"), false);

    assertEquals(List.of("public.orders"), plan.added());
    CaptureState again = state();
    assertEquals(Set.of("public.customers"), again.captured());
    assertEquals(List.of("public.orders"), again.pending());
    assertEquals(List.of("public.orders"), again.unsignalled());
    // Planned again (a restart before the signal): pending once, not added twice.
    assertEquals(List.of(), again.plan(List.of("public.customers", "public.orders"), false).added());
  }

  @Test
  void aSignalledTableIsNotSignalledAgainAndIsCapturedOnceDelivered() throws Exception {
    CaptureState state = state();
    state.assumeCaptured(List.of("public.customers"));
    state.plan(List.of("public.customers", "public.orders"), false);
    state.signalled(List.of("public.orders"), "signal-1");

    CaptureState restarted = state();
    assertEquals(List.of(), restarted.unsignalled());
    assertTrue(restarted.isPending("public.orders"));
    restarted.delivered("public.orders");
    assertEquals(Set.of("public.customers", "public.orders"), state().captured());
    assertEquals(List.of(), state().pending());
  }

  @Test
  void aTableRemovedIsForgottenSoThatAddingItBackSnapshotsItAgain() throws Exception {
    CaptureState state = state();
    state.assumeCaptured(List.of("public.customers", "public.orders"));

    CaptureState.Plan removed = state().plan(List.of("public.customers"), false);
    assertEquals(List.of("public.orders"), removed.removed());
    assertEquals(Set.of("public.customers"), state().captured());

    CaptureState.Plan back = state().plan(List.of("public.customers", "public.orders"), false);
    assertEquals(List.of("public.orders"), back.added());
  }

  @Test
  void aResetRecordSkipsTheInitialSnapshotAndMakesEveryTablePending() throws Exception {
    // As `lakehouse cdc reset` writes it (lakehouse.cdc.reset).
    Files.writeString(
        dir.resolve(CaptureState.FILE), "{\"initial_snapshot\": false, \"captured\": [], \"pending\": {}}");
    CaptureState state = state();
    assertFalse(state.initialSnapshot());
    CaptureState.Plan plan = state.plan(List.of("public.customers", "public.orders"), false);
    assertEquals(List.of("public.customers", "public.orders"), plan.added());
    assertFalse(state().initialSnapshot(), "kept until the record is written anew");
    assertEquals(0, state().lsnShift());
    state().lsnShift(500);
    assertEquals(500, state().lsnShift());
  }

  @Test
  void aFailedScanIsKeptPendingAndAskedForAgainAtTheNextStart() throws Exception {
    CaptureState state = state();
    state.assumeCaptured(List.of("public.customers"));
    state.plan(List.of("public.customers", "public.log"), false);
    state.signalled(List.of("public.log"), "signal-1");
    state.failed("public.log", "NO_PRIMARY_KEY");

    CaptureState restarted = state();
    assertEquals(java.util.Map.of("public.log", "NO_PRIMARY_KEY"), restarted.failed());
    assertEquals(List.of("public.log"), restarted.unsignalled());
    restarted.delivered("public.log");
    assertEquals(java.util.Map.of(), state().failed());
  }
}
