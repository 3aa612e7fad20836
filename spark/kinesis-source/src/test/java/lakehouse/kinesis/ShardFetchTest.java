package lakehouse.kinesis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

class ShardFetchTest {
  private static final long NEVER = Long.MAX_VALUE;

  @Test
  void stopsAtTheBudgetAndNeverAsksForMore() {
    FakeShard shard = new FakeShard(100, 1);
    FetchResult r = ShardFetch.fetch(shard, 25, 10, NEVER, () -> 0L);
    assertEquals(25, r.records.size());
    assertEquals(List.of(10, 10, 5), shard.limits, "each call asks for at most what is left");
    assertEquals("1", r.records.get(0).sequenceNumber);
    assertEquals("25", r.lastSequenceNumber());
    assertFalse(r.drained);
    assertFalse(r.caughtUp);
  }

  @Test
  void shortPageAtTheTipMeansCaughtUp() {
    FakeShard shard = new FakeShard(15, 1);
    FetchResult r = ShardFetch.fetch(shard, 1000, 10, NEVER, () -> 0L);
    assertEquals(15, r.records.size());
    assertTrue(r.caughtUp);
    assertEquals(2, shard.calls);
  }

  @Test
  void fullPagesWithZeroBehindKeepReading() {
    // kinesalite always says MillisBehindLatest 0: a full page must not end the read.
    FakeShard shard = new FakeShard(30, 1);
    shard.fixedMillisBehind = 0L;
    FetchResult r = ShardFetch.fetch(shard, 1000, 10, NEVER, () -> 0L);
    assertEquals(30, r.records.size());
    assertTrue(r.caughtUp);
    assertEquals(4, shard.calls, "3 full pages, then an empty one at the tip");
  }

  @Test
  void emptyPagesBehindTheTipAreSkippedOver() {
    RecordSource sparse = new RecordSource() {
      int call;

      @Override
      public Page next(int limit) {
        call++;
        if (call < 3) {
          return new Page(List.of(), false, 5000L); // a gap in a sparse shard
        }
        return new Page(List.of(FakeShard.record(7)), false, 0L);
      }
    };
    FetchResult r = ShardFetch.fetch(sparse, 100, 10, NEVER, () -> 0L);
    assertEquals(1, r.records.size());
    assertTrue(r.caughtUp);
  }

  @Test
  void closedShardIsDrainedOnItsLastPage() {
    FakeShard shard = new FakeShard(12, 1);
    shard.closed = true;
    FetchResult r = ShardFetch.fetch(shard, 1000, 10, NEVER, () -> 0L);
    assertEquals(12, r.records.size());
    // the short page at the tip ends the read; the closure is seen by the next fetch
    assertTrue(r.caughtUp);
    FetchResult next = ShardFetch.fetch(shard, 1000, 10, NEVER, () -> 0L);
    assertTrue(next.drained);
    assertTrue(next.records.isEmpty());
  }

  @Test
  void closedShardWhoseLastPageCarriesRecordsIsDrainedAtOnce() {
    RecordSource awsLike = limit -> new Page(List.of(FakeShard.record(1)), true, 0L);
    FetchResult r = ShardFetch.fetch(awsLike, 1000, 10, NEVER, () -> 0L);
    assertTrue(r.drained);
    assertEquals(1, r.records.size());
  }

  @Test
  void deadlineEndsTheReadBetweenCalls() {
    FakeShard shard = new FakeShard(100, 1);
    long[] now = {0};
    FetchResult r = ShardFetch.fetch(shard, 1000, 10, 30, () -> now[0] += 10);
    assertEquals(30, r.records.size());
    assertFalse(r.caughtUp);
  }

  @Test
  void aByteBudgetStopsAfterThePageThatReachesIt() {
    FakeShard shard = new FakeShard(100, 1);
    long perRecord = FakeShard.record(1).approximateBytes();
    FetchResult r = ShardFetch.fetch(shard, 1000, 25 * perRecord, 10, NEVER, () -> 0L);
    assertEquals(30, r.records.size()); // three pages of 10: the third passes 25 records' bytes
    assertEquals(1000L, r.millisBehindLatest); // the last page was not at the tip
  }

  /**
   * Like kinesalite for a shard closed seconds after its last record: past the records, an empty
   * page with a next iterator (MillisBehindLatest 0) first, and only then the end.
   */
  private static RecordSource gapBeforeTheEnd(FakeShard shard) {
    return new RecordSource() {
      boolean gapShown;

      @Override
      public Page next(int limit) {
        Page page = shard.next(limit);
        if (page.records.isEmpty() && !gapShown) {
          gapShown = true;
          return new Page(List.of(), false, 0L);
        }
        return new Page(page.records, page.records.isEmpty(), 0L);
      }
    };
  }

  @Test
  void aClosedShardIsReadPastAnEmptyPageToItsEnd() {
    // Every record was read by an earlier batch; each batch starts a new iterator after them.
    FakeShard shard = new FakeShard(12, 1).from(12);
    FetchResult asIfOpen = ShardFetch.fetch(gapBeforeTheEnd(shard), 1000, Long.MAX_VALUE, 10,
        NEVER, () -> 0L, false);
    assertTrue(asIfOpen.caughtUp);
    assertFalse(asIfOpen.drained, "the empty page is taken for the tip, batch after batch");

    FetchResult closed = ShardFetch.fetch(gapBeforeTheEnd(shard.from(12)), 1000, Long.MAX_VALUE,
        10, NEVER, () -> 0L, true);
    assertTrue(closed.drained, "a closed shard is read on to its end");
    assertFalse(closed.caughtUp);
    assertTrue(closed.records.isEmpty());
  }

  @Test
  void aClosedShardIsReadOnToItsEndWithinTheTimeAllowance() {
    FakeShard shard = new FakeShard(30, 1);
    shard.closed = true;
    FetchResult r = ShardFetch.fetch(shard, 1000, Long.MAX_VALUE, 10, NEVER, () -> 0L, true);
    assertEquals(30, r.records.size());
    assertTrue(r.drained, "read past its short and empty pages to the end, in one fetch");
    assertEquals(4, shard.calls);

    RecordSource neverEnds = limit -> new Page(List.of(), false, 0L);
    long[] now = {0};
    FetchResult bounded = ShardFetch.fetch(neverEnds, 1000, Long.MAX_VALUE, 10, 50,
        () -> now[0] += 10, true);
    assertFalse(bounded.drained);
    assertEquals(50, now[0], "the deadline still ends the read");
  }
}
