package lakehouse.kinesis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.List;
import org.junit.jupiter.api.Test;

class ShardPositionTest {

  @Test
  void freshShardReadsFromTrimHorizon() {
    ShardPosition p = ShardPosition.trimHorizon("s0", List.of());
    assertEquals(StartingPoint.trimHorizon(), p.nextReadStart());
    assertEquals(StartingPoint.trimHorizon(), p.rangeStartTowards(p.consumedThrough("1", "5")));
  }

  @Test
  void consumedShardContinuesAfterItsLastRecord() {
    ShardPosition p = ShardPosition.trimHorizon("s0", List.of()).consumedThrough("1", "5");
    assertEquals(StartingPoint.afterSequence("5"), p.nextReadStart());
    assertNull(p.firstSequenceNumber, "first sequence number only anchors LATEST ranges");
  }

  @Test
  void latestRangeIsAnchoredAtTheFirstRecordConsumed() {
    ShardPosition start = ShardPosition.latest("s0", List.of());
    ShardPosition end = start.consumedThrough("100", "180");
    assertEquals(StartingPoint.latest(), start.nextReadStart());
    assertFalse(end.startAtLatest);
    assertEquals("100", end.firstSequenceNumber);
    assertEquals(StartingPoint.atSequence("100"), start.rangeStartTowards(end));
    // the next batch forgets the anchor: it starts after 180
    ShardPosition next = end.consumedThrough("181", "190");
    assertNull(next.firstSequenceNumber);
    assertEquals(StartingPoint.afterSequence("180"), end.rangeStartTowards(next));
  }

  @Test
  void latestRangeWithoutAnchorIsAnError() {
    ShardPosition start = ShardPosition.latest("s0", List.of());
    ShardPosition end = new ShardPosition("s0", List.of(), "9", false, null, false);
    assertThrows(IllegalStateException.class, () -> start.rangeStartTowards(end));
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
