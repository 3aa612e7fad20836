package lakehouse.kinesis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

class ArrivalScanTest {

  private static FakeShard kinesaliteShard(long... arrivals) {
    FakeShard shard = new FakeShard(0, 1).arrive(arrivals);
    shard.fixedMillisBehind = 0L;
    return shard;
  }

  @Test
  void skipsEarlierRecordsAcrossFullPagesThatLookLikeTheTip() {
    FakeShard shard = kinesaliteShard(10, 20, 30, 40, 50, 60, 70);
    Page page = ArrivalScan.skipUntil(shard, 2, 50);
    assertEquals(List.of("5", "6"), List.of(page.records.get(0).sequenceNumber,
        page.records.get(1).sequenceNumber));
  }

  @Test
  void keepsEverythingFromTheFirstRecordAtOrAfterTheTime() {
    // As AT_TIMESTAMP does: arrival times are approximate, a later record may say earlier.
    FakeShard shard = kinesaliteShard(10, 50, 45, 60);
    Page page = ArrivalScan.skipUntil(shard, 10, 50);
    assertEquals(3, page.records.size());
    assertEquals("2", page.records.get(0).sequenceNumber);
  }

  @Test
  void nothingAtOrAfterTheTimeIsAnEmptyPageAtTheTip() {
    FakeShard shard = kinesaliteShard(10, 20, 30);
    Page page = ArrivalScan.skipUntil(shard, 2, 50);
    assertTrue(page.records.isEmpty());
    assertTrue(page.reachedTip(2));
    assertEquals(3, shard.position, "every earlier record was read past");
  }

  @Test
  void aClosedShardWithNothingAfterTheTimeEnds() {
    FakeShard shard = kinesaliteShard(10, 20, 30);
    shard.closed = true;
    FetchResult r = ShardFetch.fetch(limit -> ArrivalScan.skipUntil(shard, limit, 50), 100, 10,
        Long.MAX_VALUE, () -> 0L);
    assertTrue(r.records.isEmpty());
    // the short page at the tip ends this read; the next one sees the end
    FetchResult next = ShardFetch.fetch(limit -> ArrivalScan.skipUntil(shard, limit, 50), 100, 10,
        Long.MAX_VALUE, () -> 0L);
    assertTrue(next.drained);
  }
}
