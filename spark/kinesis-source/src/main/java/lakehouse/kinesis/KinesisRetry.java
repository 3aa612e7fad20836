package lakehouse.kinesis;

import com.amazonaws.AmazonServiceException;
import com.amazonaws.SdkClientException;
import com.amazonaws.services.kinesis.model.ExpiredIteratorException;
import com.amazonaws.services.kinesis.model.LimitExceededException;
import com.amazonaws.services.kinesis.model.ProvisionedThroughputExceededException;
import java.io.IOException;
import java.util.Locale;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The source's one retry loop around a Kinesis call. The SDK retries throttling, 5xx and network
 * errors a few times on its own (3 by default, within seconds); what still fails reaches this
 * loop, which retries it with {@link Backoff}, logs every retry, and past the bound fails with a
 * {@link KinesisUnavailableException} that names Kinesis, the call and what to do. A failed batch
 * is safe: the job exits, its supervisor restarts it and the checkpoint replays the batch.
 *
 * <p>Throttling, 5xx answers and network errors are retried after a backoff; an expired iterator
 * at once (the caller re-acquires it first); anything else is thrown as is.
 */
final class KinesisRetry {
  private static final Logger LOG = LoggerFactory.getLogger(KinesisRetry.class);

  enum Failure { THROTTLED, EXPIRED_ITERATOR, SERVER_ERROR, NETWORK, OTHER }

  /** Sleeps between attempts; tests pass one that only records the delays. */
  interface Sleeper {
    void sleep(long ms);
  }

  private final Backoff backoff;
  private final String where;
  private final Sleeper sleeper;

  /** {@code where}: the stream (and shard) and the endpoint, for the log and the error. */
  KinesisRetry(Backoff backoff, String where) {
    this(backoff, where, Sleep::millis);
  }

  KinesisRetry(Backoff backoff, String where, Sleeper sleeper) {
    this.backoff = backoff;
    this.where = where;
    this.sleeper = sleeper;
  }

  static Failure classify(RuntimeException e) {
    if (e instanceof ProvisionedThroughputExceededException
        || e instanceof LimitExceededException) {
      return Failure.THROTTLED;
    }
    if (e instanceof ExpiredIteratorException) {
      return Failure.EXPIRED_ITERATOR;
    }
    if (e instanceof AmazonServiceException) {
      return ((AmazonServiceException) e).getStatusCode() >= 500
          ? Failure.SERVER_ERROR : Failure.OTHER;
    }
    if (e instanceof SdkClientException && ((SdkClientException) e).isRetryable()) {
      for (Throwable c = e.getCause(); c != null; c = c.getCause()) {
        if (c instanceof IOException) {
          return Failure.NETWORK;
        }
      }
    }
    return Failure.OTHER;
  }

  /** Runs {@code call}, retried as {@link #failed} says. */
  <T> T call(String operation, Supplier<T> call) {
    for (int attempt = 1; ; attempt++) {
      try {
        return call.get();
      } catch (RuntimeException e) {
        failed(operation, attempt, e);
      }
    }
  }

  /**
   * Attempt {@code attempt} (1-based) of {@code operation} failed with {@code e}. Returns, after
   * the backoff, when the call is to be retried; throws {@code e} itself when retrying cannot help,
   * and a {@link KinesisUnavailableException} past the bound.
   */
  void failed(String operation, int attempt, RuntimeException e) {
    if (e instanceof KinesisUnavailableException) {
      throw e; // a nested call (e.g. GetShardIterator inside GetRecords) already gave up
    }
    Failure failure = classify(e);
    if (failure == Failure.OTHER) {
      throw e;
    }
    if (!backoff.canRetry(attempt)) {
      KinesisUnavailableException gaveUp = new KinesisUnavailableException(String.format(
          Locale.ROOT,
          "Kinesis %s for %s failed %d times in a row (retried for %.1f s), last with %s: %s."
              + " Giving up: the query fails so that the job's supervisor restarts it, and the"
              + " restart replays the batch from the checkpoint (no record is lost). %s",
          operation, where, attempt, waitedMs(failure, attempt) / 1000.0, errorName(e),
          e.getMessage(), advice(failure)), e);
      LOG.error("{}", gaveUp.getMessage());
      throw gaveUp;
    }
    long delay = failure == Failure.EXPIRED_ITERATOR ? 0 : backoff.delayMs(attempt);
    LOG.warn("Kinesis {} for {} failed (attempt {} of {}): {}: {}; retrying in {} ms",
        operation, where, attempt, backoff.maxAttempts, errorName(e), e.getMessage(), delay);
    sleeper.sleep(delay);
  }

  /** The backoff slept before {@code attempt} (the SDK's own retries come on top). */
  private long waitedMs(Failure failure, int attempt) {
    long total = 0;
    for (int a = 1; a < attempt && failure != Failure.EXPIRED_ITERATOR; a++) {
      total += backoff.delayMs(a);
    }
    return total;
  }

  private static String errorName(RuntimeException e) {
    if (e instanceof AmazonServiceException) {
      AmazonServiceException s = (AmazonServiceException) e;
      return s.getErrorCode() + " (HTTP " + s.getStatusCode() + ")";
    }
    return e.getClass().getSimpleName();
  }

  private static String advice(Failure failure) {
    switch (failure) {
      case THROTTLED:
        return "Kinesis kept throttling: the shard's read limits (5 GetRecords calls and 2 MB per"
            + " second) or the stream's control-plane limits are shared with every other consumer;"
            + " look for other readers, raise option minGetRecordsIntervalMs, or add shards.";
      case EXPIRED_ITERATOR:
        return "Fresh shard iterators expired at once: check that this host's clock is right.";
      case SERVER_ERROR:
        return "Kinesis kept answering with server errors: check the service's health (the AWS"
            + " Health Dashboard, or the emulator's log) and restart when it answers again.";
      default:
        return "The Kinesis endpoint could not be reached: check the network path and the"
            + " endpointUrl option.";
    }
  }
}
