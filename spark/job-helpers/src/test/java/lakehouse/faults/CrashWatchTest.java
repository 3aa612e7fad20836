package lakehouse.faults;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import org.junit.jupiter.api.Test;

class CrashWatchTest {
  private static StackTraceElement frame(String cls, String method) {
    return new StackTraceElement(cls, method, "X.java", 1);
  }

  @Test
  void findsThePointWhoseTextAFrameContains() {
    List<StackTraceElement[]> stacks = List.of(
        new StackTraceElement[] {frame("java.lang.Thread", "run")},
        new StackTraceElement[] {
            frame("org.apache.thrift.TServiceClient", "receiveBase"),
            frame("org.apache.hudi.hive.HiveSyncTool", "syncHoodieTable"),
            frame("org.apache.hudi.HoodieSparkSqlWriter", "write")});
    assertEquals(1, CrashWatch.firstMatch(
        List.of("RunCompactionProcedure.call", "HiveSyncTool.syncHoodieTable"), stacks));
  }

  @Test
  void findsNothingWhenNoFrameMatches() {
    List<StackTraceElement[]> stacks = List.<StackTraceElement[]>of(
        new StackTraceElement[] {frame("org.apache.hudi.HoodieSparkSqlWriter", "write")});
    assertEquals(-1, CrashWatch.firstMatch(List.of("HiveSyncTool.syncHoodieTable"), stacks));
  }
}
