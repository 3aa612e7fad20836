package lakehouse.kinesis;

import com.amazonaws.http.timers.client.ClientExecutionTimeoutException;
import com.amazonaws.services.kinesis.AbstractAmazonKinesis;
import com.amazonaws.services.kinesis.model.ExpiredIteratorException;
import com.amazonaws.services.kinesis.model.GetRecordsRequest;
import com.amazonaws.services.kinesis.model.GetRecordsResult;
import com.amazonaws.services.kinesis.model.GetShardIteratorRequest;
import com.amazonaws.services.kinesis.model.GetShardIteratorResult;
import com.amazonaws.services.kinesis.model.InvalidArgumentException;
import com.amazonaws.services.kinesis.model.Record;
import com.amazonaws.services.kinesis.model.ResourceNotFoundException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Date;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * GetShardIterator and GetRecords over {@link FakeShard}s, with the wire quirks the cursor must
 * handle: the Timestamp as SDK v1 sends it (a Date whose milliseconds are the seconds meant),
 * kinesalite's AT_TIMESTAMP that never answers while no record is at or after the time (seen by
 * the client as its execution timeout), and a start time in the future refused.
 */
final class FakeKinesis extends AbstractAmazonKinesis {
  final Map<String, FakeShard> shards = new HashMap<>();
  final List<GetShardIteratorRequest> iteratorRequests = new ArrayList<>();
  /** Like kinesalite: AT_TIMESTAMP without a record at or after it hangs (until the timeout). */
  boolean atTimestampHangsWhenNothingAfter;
  long nowMillis = Long.MAX_VALUE;
  /** GetRecords calls still to answer with ExpiredIteratorException (an idle 5 minutes). */
  int expireNextGetRecords;
  private final Map<String, RecordSource> iterators = new HashMap<>();
  private int nextIterator;

  @Override
  public GetShardIteratorResult getShardIterator(GetShardIteratorRequest request) {
    iteratorRequests.add(request);
    FakeShard shard = shards.get(request.getShardId());
    if (shard == null) {
      throw new ResourceNotFoundException("Shard " + request.getShardId() + " does not exist");
    }
    StartingPoint start;
    switch (StartingPoint.Type.valueOf(request.getShardIteratorType())) {
      case AT_TIMESTAMP:
        long millis = request.getTimestamp().getTime() * 1000; // seconds on the wire
        if (millis > nowMillis) {
          throw new InvalidArgumentException("Timestamp cannot be in the future");
        }
        start = StartingPoint.atTimestamp(millis);
        if (atTimestampHangsWhenNothingAfter && shard.records.stream()
            .noneMatch(r -> r.approximateArrivalMillis >= millis)) {
          throw new ClientExecutionTimeoutException();
        }
        break;
      case AT_SEQUENCE_NUMBER:
        start = StartingPoint.atSequence(request.getStartingSequenceNumber());
        break;
      case AFTER_SEQUENCE_NUMBER:
        start = StartingPoint.afterSequence(request.getStartingSequenceNumber());
        break;
      default:
        start = StartingPoint.trimHorizon();
    }
    String id = "iterator-" + nextIterator++;
    iterators.put(id, shard.reader(start));
    return new GetShardIteratorResult().withShardIterator(id);
  }

  @Override
  public GetRecordsResult getRecords(GetRecordsRequest request) {
    if (expireNextGetRecords > 0) {
      expireNextGetRecords--;
      iterators.remove(request.getShardIterator());
      throw new ExpiredIteratorException("Iterator expired");
    }
    RecordSource reader = iterators.remove(request.getShardIterator());
    Page page = reader.next(request.getLimit());
    List<Record> records = new ArrayList<>();
    for (KinesisRecord r : page.records) {
      records.add(new Record().withData(ByteBuffer.wrap(r.data)).withPartitionKey(r.partitionKey)
          .withSequenceNumber(r.sequenceNumber)
          .withApproximateArrivalTimestamp(new Date(r.approximateArrivalMillis)));
    }
    String next = null;
    if (!page.endOfShard) {
      next = "iterator-" + nextIterator++;
      iterators.put(next, reader);
    }
    return new GetRecordsResult().withRecords(records).withNextShardIterator(next)
        .withMillisBehindLatest(page.millisBehindLatest);
  }
}
