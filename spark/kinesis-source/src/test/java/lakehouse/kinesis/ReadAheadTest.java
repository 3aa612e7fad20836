package lakehouse.kinesis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class ReadAheadTest {
  private static SourceOffset at(String last) {
    return SourceOffset.of(new StreamOffset("s", "s-arn@1", List.of(new ShardPosition(
        "shardId-000000000000", List.of(), last, 1_795_400_000_000L, null, false))));
  }

  private static ReadAhead.Batch batch(SourceOffset end, boolean caughtUp) {
    FetchResult result = new FetchResult(List.of(), false, caughtUp);
    return new ReadAhead.Batch(end, Map.of("s", Map.of("shardId-000000000000", result)));
  }

  @Test
  void theBatchReadAheadIsTakenWhenItsStartAndLimitAreAskedFor() {
    ReadAhead reading = new ReadAhead();
    AtomicInteger reads = new AtomicInteger();
    ReadAhead.Batch ahead = batch(at("9"), false);
    reading.readAhead(at("5"), OptionalLong.of(10), () -> {
      reads.incrementAndGet();
      return ahead;
    });
    ReadAhead.Batch got = reading.read(at("5"), OptionalLong.of(10), () -> {
      throw new AssertionError("read afresh although the read ahead was the batch asked for");
    });
    assertSame(ahead, got);
    assertEquals(1, reads.get());
    reading.stop();
  }

  @Test
  void anotherStartOrLimitIsReadAfreshAfterTheReadAheadEnds() throws Exception {
    ReadAhead reading = new ReadAhead();
    CountDownLatch release = new CountDownLatch(1);
    List<String> order = Collections.synchronizedList(new ArrayList<>());
    reading.readAhead(at("5"), OptionalLong.of(10), () -> {
      try {
        release.await(5, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      order.add("ahead");
      return batch(at("9"), false);
    });
    Thread releaser = new Thread(() -> {
      try {
        Thread.sleep(200);
      } catch (InterruptedException e) {
        return;
      }
      release.countDown();
    });
    releaser.start();
    ReadAhead.Batch fresh = batch(at("7"), true);
    ReadAhead.Batch got = reading.read(at("5"), OptionalLong.of(20), () -> {
      order.add("fresh");
      return fresh;
    });
    assertSame(fresh, got);
    // Never two reads at once: the fresh read waited for the one ahead to end.
    assertEquals(List.of("ahead", "fresh"), order);
    assertSame(fresh, reading.read(at("5"), OptionalLong.of(20), () -> fresh));
    releaser.join();
    reading.stop();
  }

  @Test
  void aFailedReadAheadIsReadAgainAndAFailingReadFails() {
    ReadAhead reading = new ReadAhead();
    reading.readAhead(at("5"), OptionalLong.empty(), () -> {
      throw new KinesisUnavailableException("throttled", null);
    });
    ReadAhead.Batch fresh = batch(at("6"), true);
    assertSame(fresh, reading.read(at("5"), OptionalLong.empty(), () -> fresh));
    IllegalStateException e = assertThrows(IllegalStateException.class,
        () -> reading.read(at("6"), OptionalLong.empty(), () -> {
          throw new IllegalStateException("Kinesis shard gone");
        }));
    assertEquals("Kinesis shard gone", e.getMessage());
    reading.stop();
  }

  @Test
  void aBatchIsBehindWhileAShardStoppedShortOfItsTip() {
    assertTrue(batch(at("5"), false).behind());
    assertFalse(batch(at("5"), true).behind());
    FetchResult drained = new FetchResult(List.of(), true, false);
    assertFalse(new ReadAhead.Batch(at("5"), Map.of("s", Map.of("x", drained))).behind());
  }
}
