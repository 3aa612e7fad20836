package lakehouse.kinesis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

class RetentionGuardTest {
  private static final long HOUR = 3_600_000L;
  private static final long NOW = 1_795_000_000_000L;
  private static final String S0 = "shardId-000000000000";

  private final RetentionGuard guard = new RetentionGuard("orders", 24 * HOUR);

  /** A read of a kinesalite-like shard (MillisBehindLatest always 0) from its consumed position. */
  private static long lagOfRead(long... arrivals) {
    FakeShard shard = new FakeShard(0, 1).arrive(arrivals);
    shard.fixedMillisBehind = 0L;
    return ShardFetch.fetch(shard, 1000, 100, Long.MAX_VALUE, () -> 0L).lagMillis(NOW);
  }

  private static ShardPosition consumed() {
    return ShardPosition.trimHorizon(S0, List.of()).consumedThrough("41", NOW - 26 * HOUR);
  }

  @Test
  void aBacklogAtTheRetentionFailsNamingTheShardTheLagAndWhatToDo() {
    long lag = lagOfRead(NOW - 24 * HOUR - 60_000, NOW - 23 * HOUR);
    assertEquals(24 * HOUR + 60_000, lag, "the oldest unread record's age, whatever engines say");
    IllegalStateException e = assertThrows(IllegalStateException.class,
        () -> guard.afterRead(consumed(), lag));
    String m = e.getMessage();
    assertTrue(m.contains(S0) && m.contains("orders"), m);
    assertTrue(m.contains("24h01m behind") && m.contains("retention of 24h00m"), m);
    assertTrue(m.contains("Scale the job") && m.contains("raise the stream's retention"), m);
  }

  @Test
  void aBacklogOfHalfTheRetentionOnlyWarns() {
    guard.afterRead(consumed(), lagOfRead(NOW - 13 * HOUR));
    guard.afterRead(consumed(), lagOfRead(NOW - 14 * HOUR));
  }

  @Test
  void aReadFromTrimHorizonStartsAtTheHorizonAndMayCatchUp() {
    ShardPosition fresh = ShardPosition.trimHorizon(S0, List.of());
    guard.afterRead(fresh, 24 * HOUR + 120_000); // the oldest record Kinesis still keeps
    guard.afterRead(consumed(), 24 * HOUR + 60_000); // gaining on the horizon
    assertThrows(IllegalStateException.class, () -> guard.afterRead(consumed(), 24 * HOUR + 90_000),
        "no longer gaining: records age out unread");
  }

  @Test
  void aLatestStartIsNoExcuse() {
    ShardPosition sinceStart = ShardPosition.atTimestamp(S0, List.of(), NOW - 30 * HOUR);
    assertThrows(IllegalStateException.class, () -> guard.afterRead(sinceStart, 25 * HOUR));
  }

  @Test
  void aPositionOlderThanTheRetentionBeforeTheFirstReadIsAWarningOnly() {
    // An idle shard and one whose records aged out while no query ran look the same.
    guard.beforeFirstRead(consumed(), NOW);
  }

  @Test
  void durationsAreReadable() {
    assertEquals("24h00m", RetentionGuard.duration(24 * HOUR));
    assertEquals("2m05s", RetentionGuard.duration(125_000));
    assertEquals("1.5s", RetentionGuard.duration(1500));
  }
}
