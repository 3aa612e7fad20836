package lakehouse.kinesis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.util.List;
import org.junit.jupiter.api.Test;

class RecordCacheTest {
  private static FetchResult records(long first, long last) {
    List<KinesisRecord> rs = new java.util.ArrayList<>();
    for (long s = first; s <= last; s++) {
      rs.add(FakeShard.record(s));
    }
    return new FetchResult(rs, false, false);
  }

  @Test
  void hitsOnlyForTheExactRange() {
    RecordCache cache = new RecordCache();
    cache.put("a", StartingPoint.afterSequence("10"), records(11, 20));
    assertNotNull(cache.get("a", StartingPoint.afterSequence("10"), "20"));
    assertNull(cache.get("a", StartingPoint.afterSequence("10"), "19"), "logged end differs");
    assertNull(cache.get("a", StartingPoint.trimHorizon(), "20"));
  }

  @Test
  void commitEvictsCommittedBatchesButKeepsTheNextOne() {
    RecordCache cache = new RecordCache();
    cache.put("a", StartingPoint.trimHorizon(), records(1, 10)); // batch N-1
    cache.put("a", StartingPoint.afterSequence("10"), records(11, 20)); // batch N, already planned
    cache.put("b", StartingPoint.atTimestamp(5000L), records(5, 6)); // a LATEST-started batch N
    StreamOffset committed = new StreamOffset("s", List.of(
        ShardPosition.trimHorizon("a", List.of()).consumedThrough("10", null),
        ShardPosition.atTimestamp("b", List.of(), 5000L)));
    cache.evictCommitted(committed);
    assertEquals(2, cache.size());
    assertNull(cache.get("a", StartingPoint.trimHorizon(), "10"));
    assertNotNull(cache.get("a", StartingPoint.afterSequence("10"), "20"));
    assertNotNull(cache.get("b", StartingPoint.atTimestamp(5000L), "6"));
  }
}
