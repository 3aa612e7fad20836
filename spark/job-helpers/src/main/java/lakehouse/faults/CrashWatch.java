package lakehouse.faults;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;

/**
 * Test-only crash points inside the job's JVM, armed by lakehouse_job/crash_points.py for its
 * "during:TEXT" points (LAKEHOUSE_CRASH_POINTS). A daemon thread samples every thread's stack;
 * the first time a frame's class.method contains a point's text (e.g.
 * HiveSyncTool.syncHoodieTable), it records the point as fired and kills the Python driver and
 * this JVM at once, as a crash at that moment would: SIGKILL for the driver, Runtime.halt (no
 * shutdown hook, nothing flushed) for the JVM. Nothing calls it unless a test arms it.
 */
public final class CrashWatch {
  private CrashWatch() {}

  /**
   * @param texts     what a frame's class.method must contain, one per point
   * @param firedFiles for each point, the file whose creation records that it fired (the
   *                   Python side reads them, so that a restarted job does not fire it again)
   * @param driverPid the Python driver, killed with the JVM
   */
  public static void start(String[] texts, String[] firedFiles, long driverPid, long intervalMs) {
    if (texts.length != firedFiles.length) {
      throw new IllegalArgumentException("one fired-file per crash point expected");
    }
    List<String> needles = List.of(texts);
    Thread watcher = new Thread(() -> {
      while (true) {
        int hit = firstMatch(needles, Thread.getAllStackTraces().values());
        if (hit >= 0) {
          crash(texts[hit], Paths.get(firedFiles[hit]), driverPid);
        }
        try {
          Thread.sleep(intervalMs);
        } catch (InterruptedException e) {
          return;
        }
      }
    }, "lakehouse-crash-watch");
    watcher.setDaemon(true);
    watcher.start();
  }

  /** Index of the first needle some frame of {@code stacks} contains, or -1. */
  static int firstMatch(List<String> needles, Collection<StackTraceElement[]> stacks) {
    List<String> frames = new ArrayList<>();
    for (StackTraceElement[] stack : stacks) {
      for (StackTraceElement frame : stack) {
        frames.add(frame.getClassName() + "." + frame.getMethodName());
      }
    }
    for (int i = 0; i < needles.size(); i++) {
      for (String frame : frames) {
        if (frame.contains(needles.get(i))) {
          return i;
        }
      }
    }
    return -1;
  }

  private static void crash(String text, Path fired, long driverPid) {
    try (FileChannel out = FileChannel.open(fired, StandardOpenOption.CREATE,
        StandardOpenOption.WRITE, StandardOpenOption.TRUNCATE_EXISTING)) {
      out.write(StandardCharsets.UTF_8.encode("during:" + text));
      out.force(true);
    } catch (IOException e) {
      // Not recorded means it would fire again after the restart, in a loop: do not crash.
      System.err.println("crash point during:" + text + " not recorded (" + e + "); not firing");
      return;
    }
    System.err.println("crash point during:" + text + ": killing the driver and the JVM");
    ProcessHandle.of(driverPid).ifPresent(ProcessHandle::destroyForcibly);
    Runtime.getRuntime().halt(137);
  }
}
