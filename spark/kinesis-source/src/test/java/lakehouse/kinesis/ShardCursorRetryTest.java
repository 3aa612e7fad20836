package lakehouse.kinesis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.amazonaws.services.kinesis.AbstractAmazonKinesis;
import com.amazonaws.services.kinesis.model.ExpiredIteratorException;
import com.amazonaws.services.kinesis.model.GetRecordsRequest;
import com.amazonaws.services.kinesis.model.GetRecordsResult;
import com.amazonaws.services.kinesis.model.GetShardIteratorRequest;
import com.amazonaws.services.kinesis.model.GetShardIteratorResult;
import com.amazonaws.services.kinesis.model.ProvisionedThroughputExceededException;
import com.amazonaws.services.kinesis.model.Record;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** ShardCursor under failing calls (its reading itself: the local tests). */
class ShardCursorRetryTest {
  private static final KinesisOptions OPTIONS = KinesisOptions.parse(Map.of("streamName", "s",
      "endpointUrl", "http://127.0.0.1:1", "minGetRecordsIntervalMs", "0"));

  /** One shard of records 1..n; iterators name the sequence number to read after. */
  static final class ScriptedKinesis extends AbstractAmazonKinesis {
    final int records;
    final Deque<RuntimeException> getRecordsErrors = new ArrayDeque<>();
    final Deque<RuntimeException> iteratorErrors = new ArrayDeque<>();
    final List<String> iteratorRequests = new ArrayList<>();
    int getRecordsCalls;

    ScriptedKinesis(int records) {
      this.records = records;
    }

    @Override
    public GetShardIteratorResult getShardIterator(GetShardIteratorRequest r) {
      iteratorRequests.add(r.getShardIteratorType() + " " + r.getStartingSequenceNumber());
      if (!iteratorErrors.isEmpty()) {
        throw iteratorErrors.poll();
      }
      long after = "AFTER_SEQUENCE_NUMBER".equals(r.getShardIteratorType())
          ? Long.parseLong(r.getStartingSequenceNumber()) : 0;
      return new GetShardIteratorResult().withShardIterator("after-" + after);
    }

    @Override
    public GetRecordsResult getRecords(GetRecordsRequest r) {
      getRecordsCalls++;
      if (!getRecordsErrors.isEmpty()) {
        throw getRecordsErrors.poll();
      }
      long after = Long.parseLong(r.getShardIterator().substring("after-".length()));
      List<Record> page = new ArrayList<>();
      for (long seq = after + 1; seq <= records && page.size() < r.getLimit(); seq++) {
        page.add(new Record().withSequenceNumber(Long.toString(seq)).withPartitionKey("k")
            .withData(ByteBuffer.wrap(("r" + seq).getBytes())));
      }
      long last = page.isEmpty() ? after : after + page.size();
      return new GetRecordsResult().withRecords(page).withNextShardIterator("after-" + last)
          .withMillisBehindLatest(0L);
    }
  }

  private final List<Long> slept = new ArrayList<>();

  private ShardCursor cursor(ScriptedKinesis kinesis) {
    return new ShardCursor(kinesis, OPTIONS, "shardId-000000000000", StartingPoint.trimHorizon())
        .withBackoff(new Backoff(10, 40, 6), slept::add);
  }

  private static List<String> sequences(Page page) {
    List<String> out = new ArrayList<>();
    page.records.forEach(r -> out.add(r.sequenceNumber));
    return out;
  }

  @Test
  void serverErrorsThatOutlastTheSdkRetriesAreRetriedHereWithoutSkippingRecords() {
    ScriptedKinesis kinesis = new ScriptedKinesis(5);
    ShardCursor c = cursor(kinesis);
    assertEquals(List.of("1", "2"), sequences(c.next(2)));
    kinesis.getRecordsErrors.add(KinesisRetryTest.serverError(500, "InternalFailure"));
    kinesis.getRecordsErrors.add(KinesisRetryTest.connectionReset());
    assertEquals(List.of("3", "4"), sequences(c.next(2)));
    assertEquals(List.of(10L, 20L), slept);
    assertEquals(1, kinesis.iteratorRequests.size(), "the iterator was still good");
  }

  @Test
  void anExpiredIteratorIsReacquiredRightAfterTheLastRecordReturned() {
    ScriptedKinesis kinesis = new ScriptedKinesis(5);
    ShardCursor c = cursor(kinesis);
    assertEquals(List.of("1", "2"), sequences(c.next(2)));
    kinesis.getRecordsErrors.add(new ExpiredIteratorException("expired"));
    kinesis.iteratorErrors.add(KinesisRetryTest.serverError(503, "ServiceUnavailable"));
    assertEquals(List.of("3", "4", "5"), sequences(c.next(10)));
    assertEquals(List.of("TRIM_HORIZON null", "AFTER_SEQUENCE_NUMBER 2",
        "AFTER_SEQUENCE_NUMBER 2"), kinesis.iteratorRequests);
  }

  @Test
  void throttlingPastTheBoundFailsLoudly() {
    ScriptedKinesis kinesis = new ScriptedKinesis(5);
    for (int i = 0; i < 6; i++) {
      kinesis.getRecordsErrors.add(
          new ProvisionedThroughputExceededException("no"));
    }
    KinesisUnavailableException e = assertThrows(KinesisUnavailableException.class,
        () -> cursor(kinesis).next(2));
    assertEquals(6, kinesis.getRecordsCalls);
    assertTrue(e.getMessage().startsWith("Kinesis GetRecords for stream 's' shard"
        + " shardId-000000000000 at http://127.0.0.1:1"), e.getMessage());
  }
}
