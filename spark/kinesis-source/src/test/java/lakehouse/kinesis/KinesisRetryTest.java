package lakehouse.kinesis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.amazonaws.SdkClientException;
import com.amazonaws.services.kinesis.model.AmazonKinesisException;
import com.amazonaws.services.kinesis.model.ExpiredIteratorException;
import com.amazonaws.services.kinesis.model.InvalidArgumentException;
import com.amazonaws.services.kinesis.model.LimitExceededException;
import com.amazonaws.services.kinesis.model.ProvisionedThroughputExceededException;
import java.io.IOException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

class KinesisRetryTest {
  private final List<Long> slept = new ArrayList<>();

  private KinesisRetry retry(int maxAttempts) {
    return new KinesisRetry(new Backoff(100, 400, maxAttempts), "stream 's' shard shardId-1",
        slept::add);
  }

  /** Fails with the given errors in turn, then answers "ok". */
  private static Supplier<String> failing(RuntimeException... errors) {
    Deque<RuntimeException> left = new ArrayDeque<>(List.of(errors));
    return () -> {
      if (!left.isEmpty()) {
        throw left.poll();
      }
      return "ok";
    };
  }

  static AmazonKinesisException serverError(int status, String code) {
    AmazonKinesisException e = new AmazonKinesisException("injected " + code);
    e.setStatusCode(status);
    e.setErrorCode(code);
    return e;
  }

  static SdkClientException connectionReset() {
    return new SdkClientException("Unable to execute HTTP request: Connection reset",
        new IOException("Connection reset"));
  }

  @Test
  void throttlingServerAndNetworkErrorsAreRetriedWithBackoff() {
    String result = retry(12).call("GetRecords", failing(
        new ProvisionedThroughputExceededException("slow down"),
        new LimitExceededException("slow down"),
        serverError(500, "InternalFailure"),
        serverError(503, "ServiceUnavailable"),
        connectionReset()));
    assertEquals("ok", result);
    assertEquals(List.of(100L, 200L, 400L, 400L, 400L), slept);
  }

  @Test
  void anExpiredIteratorIsRetriedAtOnce() {
    assertEquals("ok", retry(12).call("GetRecords",
        failing(new ExpiredIteratorException("expired"))));
    assertEquals(List.of(0L), slept);
  }

  @Test
  void otherErrorsAreNotRetried() {
    InvalidArgumentException invalid = new InvalidArgumentException("bad iterator");
    invalid.setStatusCode(400);
    RuntimeException thrown = assertThrows(RuntimeException.class,
        () -> retry(12).call("GetRecords", failing(invalid)));
    assertSame(invalid, thrown);
    assertTrue(slept.isEmpty());
    // Not an I/O failure (e.g. no credentials): retrying would not help either.
    SdkClientException noCredentials = new SdkClientException("Unable to load AWS credentials");
    assertSame(noCredentials, assertThrows(RuntimeException.class,
        () -> retry(12).call("GetRecords", failing(noCredentials))));
  }

  @Test
  void pastTheBoundItFailsNamingKinesisTheCallAndWhatToDo() {
    RuntimeException last = serverError(500, "InternalFailure");
    KinesisUnavailableException e = assertThrows(KinesisUnavailableException.class,
        () -> retry(4).call("GetRecords", failing(serverError(500, "InternalFailure"),
            serverError(500, "InternalFailure"), serverError(500, "InternalFailure"), last)));
    assertSame(last, e.getCause());
    assertEquals(List.of(100L, 200L, 400L), slept, "3 retries for 4 attempts, then no sleep");
    String m = e.getMessage();
    assertTrue(m.startsWith("Kinesis GetRecords for stream 's' shard shardId-1 failed 4 times in"
        + " a row (retried for 0.7 s), last with InternalFailure (HTTP 500)"), m);
    assertTrue(m.contains("supervisor restarts it"), m);
    assertTrue(m.contains("check the service's health"), m);
  }

  @Test
  void persistentThrottlingGivesUpAfterAbout36SecondsByDefault() {
    KinesisRetry defaults = new KinesisRetry(Backoff.defaults(), "stream 's'", slept::add);
    KinesisUnavailableException e = assertThrows(KinesisUnavailableException.class,
        () -> defaults.call("GetRecords", () -> {
          throw new ProvisionedThroughputExceededException("slow down");
        }));
    assertTrue(e.getMessage().contains("failed 12 times in a row (retried for 36.2 s)"),
        e.getMessage());
    assertEquals(11, slept.size());
    assertTrue(e.getMessage().contains("raise option minGetRecordsIntervalMs"), e.getMessage());
  }

  @Test
  void aNestedCallThatGaveUpIsNotRetriedAgain() {
    KinesisRetry r = retry(3);
    int[] outerCalls = {0};
    assertThrows(KinesisUnavailableException.class, () -> r.call("GetRecords", () -> {
      outerCalls[0]++;
      return r.call("GetShardIterator", () -> {
        throw new LimitExceededException("slow down");
      });
    }));
    assertEquals(1, outerCalls[0]);
  }
}
