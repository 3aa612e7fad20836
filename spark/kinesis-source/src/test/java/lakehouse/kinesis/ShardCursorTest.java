package lakehouse.kinesis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import lakehouse.kinesis.KinesisOptions.StartingPosition;
import org.junit.jupiter.api.Test;

class ShardCursorTest {
  private static final String S0 = "shardId-000000000000";
  private static final long NEVER = Long.MAX_VALUE;
  /** The query's start, a whole second as the source takes it. */
  private static final long START = 1_795_000_000_000L;

  private final FakeKinesis kinesis = new FakeKinesis();
  private final KinesisOptions options = KinesisOptions.parse(Map.of("streamName", "s",
      "endpointUrl", "http://127.0.0.1:1", "minGetRecordsIntervalMs", "0"));

  /** A shard that held two records before the query started. */
  private FakeShard shardWithHistory() {
    FakeShard shard = new FakeShard(0, 1).arrive(START - 5000, START - 1);
    shard.fixedMillisBehind = 0L; // kinesalite: always 0
    kinesis.shards.put(S0, shard);
    return shard;
  }

  private FetchResult fetch(ShardPosition from) {
    return ShardFetch.fetch(new ShardCursor(kinesis, options, S0, from.nextReadStart()), 1000, 10,
        NEVER, () -> 0L);
  }

  private static List<String> seqs(List<KinesisRecord> records) {
    List<String> out = new ArrayList<>();
    records.forEach(r -> out.add(r.sequenceNumber));
    return out;
  }

  private ShardPosition latestStart() {
    StreamOffset initial = ShardLineage.initial("s",
        List.of(new ShardDescription(S0, null, null, false)), StartingPosition.LATEST, START);
    return initial.get(S0).orElseThrow();
  }

  @Test
  void aLatestQueryThatCrashesBeforeAShardsFirstRecordMissesNothing() {
    FakeShard shard = shardWithHistory();
    ShardPosition start = latestStart();
    assertTrue(fetch(start).records.isEmpty(), "nothing has arrived since the start");
    // The job dies before the first record; records arrive while it is down.
    shard.arrive(START + 2000, START + 3000);
    // The restart reads from the initial offset again: both records, none from before.
    assertEquals(List.of("3", "4"), seqs(fetch(start).records));
  }

  @Test
  void anIdleShardWhoseIteratorExpiresResumesAtTheStartTime() {
    FakeShard shard = shardWithHistory();
    ShardCursor cursor = new ShardCursor(kinesis, options, S0, latestStart().nextReadStart());
    assertTrue(cursor.next(10).records.isEmpty());
    shard.arrive(START + 2000);
    kinesis.expireNextGetRecords = 1; // idle past the iterator's 5 minutes
    shard.arrive(START + 400_000);
    assertEquals(List.of("3", "4"), seqs(cursor.next(10).records));
  }

  @Test
  void aReplayOfALatestShardsFirstBatchReadsTheSameRecords() {
    FakeShard shard = shardWithHistory();
    shard.arrive(START, START + 10, START + 20);
    ShardPosition start = latestStart();
    FetchResult first = fetch(start);
    assertEquals(List.of("3", "4", "5"), seqs(first.records));
    shard.arrive(START + 30); // more arrives before the replay
    RangeReader replay = new RangeReader(new ShardCursor(kinesis, options, S0,
        start.nextReadStart()), S0, first.lastSequenceNumber(), 10);
    List<String> again = new ArrayList<>();
    while (replay.hasNext()) {
      again.add(replay.next().sequenceNumber);
    }
    assertEquals(seqs(first.records), again);
  }

  @Test
  void theTimestampGoesOnTheWireAsTheSecondsKinesisReadsFromJson() {
    shardWithHistory();
    new ShardCursor(kinesis, options, S0, StartingPoint.atTimestamp(START)).next(10);
    assertEquals(START / 1000, kinesis.iteratorRequests.get(0).getTimestamp().getTime());
  }

  @Test
  void withoutAnAnswerToAtTimestampTheShardIsScannedFromTrimHorizon() {
    FakeShard shard = shardWithHistory();
    shard.arrive(START - 900, START - 800, START - 700); // a page of 3 or more before the start
    kinesis.atTimestampHangsWhenNothingAfter = true;
    ShardCursor cursor = new ShardCursor(kinesis, options, S0, StartingPoint.atTimestamp(START));
    Page page = cursor.next(2);
    assertTrue(page.records.isEmpty());
    assertTrue(page.reachedTip(2), "read through the earlier records to the tip");
    assertEquals("TRIM_HORIZON", kinesis.iteratorRequests.get(1).getShardIteratorType());
    // Records arriving later are read by the same cursor, every one of them.
    shard.arrive(START + 1, START - 5, START + 9); // arrival times are approximate
    assertEquals(List.of("6", "7", "8"), seqs(cursor.next(10).records));
  }

  @Test
  void aStartAheadOfTheEnginesClockReadsNothingYet() {
    shardWithHistory();
    kinesis.nowMillis = START - 1500; // the driver's clock is ahead of the engine's
    Page page = new ShardCursor(kinesis, options, S0, StartingPoint.atTimestamp(START)).next(10);
    assertTrue(page.records.isEmpty());
    assertFalse(page.endOfShard);
    assertTrue(page.reachedTip(10));
  }

  @Test
  void aShardThatIsGoneFailsNamingItAndWhatToDo() {
    // S0 is not there: it aged out before the query read it to its end.
    ShardCursor cursor = new ShardCursor(kinesis, options, S0, StartingPoint.afterSequence("42"));
    IllegalStateException e = assertThrows(IllegalStateException.class, () -> cursor.next(10));
    assertTrue(e.getMessage().contains(S0), e.getMessage());
    assertTrue(e.getMessage().contains("AFTER_SEQUENCE_NUMBER:42"), e.getMessage());
    assertTrue(e.getMessage().contains("aged out"), e.getMessage());
    assertTrue(e.getMessage().contains("new checkpoint location"), e.getMessage());
  }
}
