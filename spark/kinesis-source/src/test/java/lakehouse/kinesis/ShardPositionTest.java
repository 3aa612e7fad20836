package lakehouse.kinesis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.util.List;
import org.junit.jupiter.api.Test;

class ShardPositionTest {

  @Test
  void freshShardReadsFromTrimHorizon() {
    ShardPosition p = ShardPosition.trimHorizon("s0", List.of());
    assertEquals(StartingPoint.trimHorizon(), p.nextReadStart());
    assertNull(p.unreadSinceMillis());
  }

  @Test
  void consumedShardContinuesAfterItsLastRecord() {
    ShardPosition p = ShardPosition.trimHorizon("s0", List.of()).consumedThrough("5", 7000L);
    assertEquals(StartingPoint.afterSequence("5"), p.nextReadStart());
    assertEquals(7000L, p.unreadSinceMillis(), "what follows arrived after the last record");
  }

  @Test
  void aLatestStartIsATimeThatEveryReadAndReplayStartsAt() {
    ShardPosition start = ShardPosition.atTimestamp("s0", List.of(), 60_000L);
    assertEquals(StartingPoint.atTimestamp(60_000L), start.nextReadStart());
    assertEquals(start.nextReadStart(), ShardPosition.atTimestamp("s0", List.of(), 60_000L)
        .nextReadStart(), "replayable: the same point however often it is asked");
    assertEquals(60_000L, start.unreadSinceMillis());
    // once a record is consumed the start time is done with
    ShardPosition next = start.consumedThrough("180", 61_000L);
    assertNull(next.startTimestampMillis);
    assertEquals(StartingPoint.afterSequence("180"), next.nextReadStart());
  }

  @Test
  void startingPointsAreDistinctCacheKeys() {
    assertEquals("AT_TIMESTAMP:60000", StartingPoint.atTimestamp(60_000L).key());
    assertEquals("TRIM_HORIZON", StartingPoint.trimHorizon().key());
    assertEquals("AFTER_SEQUENCE_NUMBER:5", StartingPoint.afterSequence("5").key());
  }

  @Test
  void sequenceNumbersCompareNumerically() {
    assertEquals(-1, SequenceNumbers.compare("9", "10"));
    assertEquals(1, SequenceNumbers.compare(
        "49680468449698476052886175294310275059276290474981195778",
        "49680468449698476052886175294309066133456675845806489602"));
    assertEquals(0, SequenceNumbers.compare("42", "42"));
  }
}
