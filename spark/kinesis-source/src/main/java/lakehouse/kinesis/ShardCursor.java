package lakehouse.kinesis;

import com.amazonaws.http.timers.client.ClientExecutionTimeoutException;
import com.amazonaws.services.kinesis.AmazonKinesis;
import com.amazonaws.services.kinesis.model.ExpiredIteratorException;
import com.amazonaws.services.kinesis.model.GetRecordsRequest;
import com.amazonaws.services.kinesis.model.GetRecordsResult;
import com.amazonaws.services.kinesis.model.GetShardIteratorRequest;
import com.amazonaws.services.kinesis.model.InvalidArgumentException;
import com.amazonaws.services.kinesis.model.Record;
import com.amazonaws.services.kinesis.model.ResourceNotFoundException;
import java.nio.ByteBuffer;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads one shard forward with GetRecords, hiding the shard iterator: acquires it from a
 * {@link StartingPoint}, paces calls per shard, retries what Kinesis fails with (bounded and
 * logged, {@link KinesisRetry}) and, when the iterator
 * expires (5 minutes), re-acquires it right after the last record returned (or at the same
 * starting point while none was). A shard that no longer exists fails loudly: its unread records
 * are gone.
 */
public final class ShardCursor implements RecordSource {
  private static final Logger LOG = LoggerFactory.getLogger(ShardCursor.class);
  /** The AT_TIMESTAMP fallback is the engine's trait, not the shard's: said once per JVM. */
  private static final AtomicBoolean SCAN_EXPLAINED = new AtomicBoolean();

  private final AmazonKinesis client;
  private final KinesisOptions options;
  private final String shardId;
  private final ShardRateLimiter limiter;
  private KinesisRetry retry;
  private StartingPoint resumeFrom;
  private String iterator;
  /** Set while AT_TIMESTAMP is emulated ({@link ArrivalScan}) and no record was kept yet. */
  private Long skipArrivalsBefore;

  public ShardCursor(AmazonKinesis client, KinesisOptions options, String shardId,
      StartingPoint start) {
    this.client = client;
    this.options = options;
    this.shardId = shardId;
    this.resumeFrom = start;
    this.limiter = ShardRateLimiter.global();
    withBackoff(Backoff.defaults(), Sleep::millis);
  }

  /** Another backoff (tests: a short one that does not sleep). */
  ShardCursor withBackoff(Backoff backoff, KinesisRetry.Sleeper sleeper) {
    retry = new KinesisRetry(backoff, "stream '" + options.streamName + "' shard " + shardId
        + " at " + options.endpointDescription(), sleeper);
    return this;
  }

  @Override
  public Page next(int limit) {
    for (int attempt = 1; ; attempt++) {
      if (iterator == null) {
        iterator = acquireIterator();
        if (iterator == null) {
          // The start time is ahead of the engine's clock, so no record can have arrived since.
          return new Page(List.of(), false, null);
        }
      }
      try {
        if (skipArrivalsBefore == null) {
          return read(limit);
        }
        Page page = ArrivalScan.skipUntil(this::read, limit, skipArrivalsBefore);
        if (!page.records.isEmpty()) {
          skipArrivalsBefore = null;
        }
        return page;
      } catch (ExpiredIteratorException e) {
        iterator = null; // re-acquired from resumeFrom on the next attempt
        retry.failed("GetRecords", attempt, e);
      }
    }
  }

  /** One GetRecords call; failures are retried here, an expired iterator is the caller's. */
  private Page read(int limit) {
    for (int attempt = 1; ; attempt++) {
      limiter.acquire(options.endpointUrl + "/" + options.streamName + "/" + shardId,
          options.minCallIntervalMs);
      try {
        GetRecordsResult result = client.getRecords(
            new GetRecordsRequest().withShardIterator(iterator).withLimit(limit));
        return toPage(result);
      } catch (ResourceNotFoundException e) {
        throw gone(e);
      } catch (ExpiredIteratorException e) {
        throw e;
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

  /** An iterator at resumeFrom; null when an AT_TIMESTAMP start is still in the engine's future. */
  private String acquireIterator() {
    GetShardIteratorRequest request = new GetShardIteratorRequest()
        .withStreamName(options.streamName).withShardId(shardId)
        .withShardIteratorType(resumeFrom.type.name());
    if (resumeFrom.sequenceNumber != null) {
      request.withStartingSequenceNumber(resumeFrom.sequenceNumber);
    }
    if (resumeFrom.timestampMillis != null) {
      // With CBOR off (KinesisClientFactory), SDK v1 writes a Date as epoch milliseconds, where
      // the JSON protocol reads seconds (aws-sdk-java#2588; Kinesis and kinesalite then say the
      // time is in the future, kinesis-mock returns nothing): a Date of the seconds as its
      // milliseconds puts the right number on the wire. Start times are whole seconds for this.
      request.withTimestamp(new Date(Math.floorDiv(resumeFrom.timestampMillis, 1000L)))
          .withSdkClientExecutionTimeout((int) options.atTimestampTimeoutMs);
    }
    for (int attempt = 1; ; attempt++) {
      try {
        return client.getShardIterator(request).getShardIterator();
      } catch (ResourceNotFoundException e) {
        throw gone(e);
      } catch (InvalidArgumentException e) {
        if (resumeFrom.timestampMillis != null && isFutureTimestamp(e)) {
          return null;
        }
        throw e;
      } catch (ClientExecutionTimeoutException e) {
        if (resumeFrom.timestampMillis == null) {
          throw e;
        }
        scanFromTrimHorizon();
        request = new GetShardIteratorRequest().withStreamName(options.streamName)
            .withShardId(shardId).withShardIteratorType(resumeFrom.type.name());
      } catch (RuntimeException e) {
        retry.failed("GetShardIterator", attempt, e);
      }
    }
  }

  /**
   * Emulates AT_TIMESTAMP from TRIM_HORIZON. Safe whatever the cause of the timeout: the records
   * skipped are exactly those AT_TIMESTAMP would not return; only the scan costs more.
   */
  private void scanFromTrimHorizon() {
    long timestamp = resumeFrom.timestampMillis;
    String message = "Kinesis at {} did not answer GetShardIterator(AT_TIMESTAMP {}) for shard {}"
        + " of '{}' within {} ms (atTimestampTimeoutMs; kinesalite never answers it while the shard"
        + " holds no record from that time on): reading from TRIM_HORIZON instead and skipping the"
        + " records that arrived before that time.";
    Object[] args = {options.endpointDescription(), Instant.ofEpochMilli(timestamp), shardId,
        options.streamName, options.atTimestampTimeoutMs};
    if (SCAN_EXPLAINED.compareAndSet(false, true)) {
      LOG.warn(message + " (Said once; later fallbacks are logged at debug level.)", args);
    } else {
      LOG.debug(message, args);
    }
    skipArrivalsBefore = timestamp;
    resumeFrom = StartingPoint.trimHorizon();
  }

  /** Kinesis, kinesalite and kinesis-mock each word it differently; all name the future. */
  private static boolean isFutureTimestamp(InvalidArgumentException e) {
    String message = String.valueOf(e.getErrorMessage()).toLowerCase(Locale.ROOT);
    return message.contains("future") || message.contains("greater than the current");
  }

  private IllegalStateException gone(ResourceNotFoundException e) {
    return new IllegalStateException("Kinesis shard " + shardId + " of stream '"
        + options.streamName + "' no longer exists at " + options.endpointDescription() + " ("
        + e.getErrorMessage() + "), and the query had not read it to its end: whatever it held"
        + " after " + resumeFrom + " aged out of the stream's retention unread (or the stream was"
        + " deleted) and cannot be read any more. To accept that loss and go on, start the query"
        + " from a new checkpoint location (and pick its startingPosition).", e);
  }

  private static byte[] bytes(ByteBuffer buffer) {
    ByteBuffer b = buffer.duplicate();
    byte[] out = new byte[b.remaining()];
    b.get(out);
    return out;
  }
}
