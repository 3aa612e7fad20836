package lakehouse.kinesis;

import com.amazonaws.services.kinesis.AmazonKinesis;
import com.amazonaws.services.kinesis.model.ExpiredIteratorException;
import com.amazonaws.services.kinesis.model.GetRecordsRequest;
import com.amazonaws.services.kinesis.model.GetRecordsResult;
import com.amazonaws.services.kinesis.model.GetShardIteratorRequest;
import com.amazonaws.services.kinesis.model.Record;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

/**
 * Reads one shard forward with GetRecords, hiding the shard iterator: acquires it from a
 * {@link StartingPoint}, paces calls per shard, retries what Kinesis fails with (bounded and
 * logged, {@link KinesisRetry}) and, when the iterator expires (5 minutes), re-acquires it right
 * after the last record returned.
 */
public final class ShardCursor implements RecordSource {
  private final AmazonKinesis client;
  private final KinesisOptions options;
  private final String shardId;
  private final ShardRateLimiter limiter;
  private KinesisRetry retry;
  private StartingPoint resumeFrom;
  private String iterator;

  public ShardCursor(AmazonKinesis client, KinesisOptions options, String shardId,
      StartingPoint start, String existingIterator) {
    this.client = client;
    this.options = options;
    this.shardId = shardId;
    this.resumeFrom = start;
    this.iterator = existingIterator;
    this.limiter = ShardRateLimiter.global();
    withBackoff(Backoff.defaults(), Sleep::millis);
  }

  /** Another backoff (tests: a short one that does not sleep). */
  ShardCursor withBackoff(Backoff backoff, KinesisRetry.Sleeper sleeper) {
    retry = new KinesisRetry(backoff, "stream '" + options.streamName + "' shard " + shardId
        + " at " + options.endpointDescription(), sleeper);
    return this;
  }

  /** The iterator to continue from (null once the shard has ended). */
  public String currentIterator() {
    return iterator;
  }

  @Override
  public Page next(int limit) {
    for (int attempt = 1; ; attempt++) {
      if (iterator == null) {
        iterator = acquireIterator();
      }
      limiter.acquire(options.endpointUrl + "/" + options.streamName + "/" + shardId,
          options.minCallIntervalMs);
      try {
        GetRecordsResult result = client.getRecords(
            new GetRecordsRequest().withShardIterator(iterator).withLimit(limit));
        return toPage(result);
      } catch (ExpiredIteratorException e) {
        iterator = null; // re-acquired from resumeFrom on the next attempt
        retry.failed("GetRecords", attempt, e);
      } catch (RuntimeException e) {
        retry.failed("GetRecords", attempt, e);
      }
    }
  }

  private Page toPage(GetRecordsResult result) {
    List<KinesisRecord> records = new ArrayList<>(result.getRecords().size());
    for (Record r : result.getRecords()) {
      records.add(new KinesisRecord(bytes(r.getData()), r.getPartitionKey(),
          r.getSequenceNumber(), r.getApproximateArrivalTimestamp() == null ? 0L
              : r.getApproximateArrivalTimestamp().getTime()));
    }
    if (!records.isEmpty()) {
      resumeFrom = StartingPoint.afterSequence(records.get(records.size() - 1).sequenceNumber);
    }
    iterator = result.getNextShardIterator();
    return new Page(records, iterator == null, result.getMillisBehindLatest());
  }

  private String acquireIterator() {
    GetShardIteratorRequest request = new GetShardIteratorRequest()
        .withStreamName(options.streamName).withShardId(shardId)
        .withShardIteratorType(resumeFrom.type.name());
    if (resumeFrom.sequenceNumber != null) {
      request.withStartingSequenceNumber(resumeFrom.sequenceNumber);
    }
    for (int attempt = 1; ; attempt++) {
      try {
        return client.getShardIterator(request).getShardIterator();
      } catch (RuntimeException e) {
        retry.failed("GetShardIterator", attempt, e);
      }
    }
  }

  private static byte[] bytes(ByteBuffer buffer) {
    ByteBuffer b = buffer.duplicate();
    byte[] out = new byte[b.remaining()];
    b.get(out);
    return out;
  }
}
