package lakehouse.cdc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.amazonaws.AbortedException;
import com.amazonaws.AmazonServiceException;
import com.amazonaws.services.kinesis.AmazonKinesis;
import com.amazonaws.services.kinesis.model.PutRecordsRequest;
import com.amazonaws.services.kinesis.model.PutRecordsRequestEntry;
import com.amazonaws.services.kinesis.model.PutRecordsResult;
import com.amazonaws.services.kinesis.model.PutRecordsResultEntry;
import io.debezium.engine.ChangeEvent;
import io.debezium.engine.DebeziumEngine;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.reflect.Proxy;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.function.Function;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class KinesisSinkTest {
  @TempDir Path dir;

  /** What Kinesis was given: stream, record text, and whether the mark existed then. */
  record Put(String stream, String data, boolean marked) {}

  final List<Put> puts = new ArrayList<>();
  Set<String> captured = Set.of("orders", "customers");

  @AfterEach
  void clearInterrupt() {
    Thread.interrupted();
  }

  static ChangeEvent<String, String> event(String stream, String key, String snapshot) {
    return event(stream, key, snapshot, 1);
  }

  static ChangeEvent<String, String> event(String stream, String key, String snapshot, long lsn) {
    String value =
        "{\"op\":\"c\",\"after\":{\"id\":" + key + "},\"source\":{\"lsn\":" + lsn
            + ",\"ts_ms\":1000,\"snapshot\":\"" + snapshot + "\"}}";
    return new ChangeEvent<>() {
      public String key() { return "{\"id\":" + key + "}"; }
      public String value() { return value; }
      public String destination() { return stream; }
      public Integer partition() { return null; }
    };
  }

  /** A Kinesis that accepts every record, unless `failure` gives an exception to throw. */
  AmazonKinesis kinesis(SnapshotMark mark, Function<PutRecordsRequest, RuntimeException> failure) {
    return (AmazonKinesis)
        Proxy.newProxyInstance(
            getClass().getClassLoader(),
            new Class<?>[] {AmazonKinesis.class},
            (proxy, method, args) -> {
              if (!method.getName().equals("putRecords")) {
                throw new UnsupportedOperationException(method.getName());
              }
              PutRecordsRequest request = (PutRecordsRequest) args[0];
              RuntimeException fail = failure.apply(request);
              if (fail != null) {
                throw fail;
              }
              List<PutRecordsResultEntry> answers = new ArrayList<>();
              for (PutRecordsRequestEntry entry : request.getRecords()) {
                puts.add(
                    new Put(
                        request.getStreamName(),
                        StandardCharsets.UTF_8.decode(entry.getData().duplicate()).toString(),
                        mark.isSet()));
                answers.add(new PutRecordsResultEntry().withSequenceNumber("1").withShardId("s"));
              }
              return new PutRecordsResult().withRecords(answers).withFailedRecordCount(0);
            });
  }

  /** Records what the engine is told, and whether the thread was interrupted meanwhile. */
  static final class Committer implements DebeziumEngine.RecordCommitter<ChangeEvent<String, String>> {
    final List<ChangeEvent<String, String>> processed = new ArrayList<>();
    int batchesFinished;
    boolean interruptedWhenFinished;

    public void markProcessed(ChangeEvent<String, String> record) {
      processed.add(record);
    }

    public void markBatchFinished() {
      batchesFinished++;
      // The engine's offset commit waits on a future: it would fail on a set interrupt.
      interruptedWhenFinished = Thread.currentThread().isInterrupted();
    }

    public void markProcessed(ChangeEvent<String, String> record, DebeziumEngine.Offsets offsets) {
      processed.add(record);
    }

    public DebeziumEngine.Offsets buildOffsets() {
      return null;
    }
  }

  /**
   * Kinesis as the engine's stop leaves it: call `at` finds the thread interrupted and the SDK
   * aborts it; every other call is answered by `otherwise` (null: accepted).
   */
  static final class StopAtCall implements Function<PutRecordsRequest, RuntimeException> {
    final int at;
    final Supplier<RuntimeException> otherwise;
    int calls;

    StopAtCall(int at, Supplier<RuntimeException> otherwise) {
      this.at = at;
      this.otherwise = otherwise;
    }

    @Override
    public RuntimeException apply(PutRecordsRequest request) {
      if (++calls == at) {
        Thread.currentThread().interrupt();
        return new AbortedException();
      }
      return otherwise.get();
    }
  }

  KinesisSink sink(SnapshotMark mark, Function<PutRecordsRequest, RuntimeException> failure, long graceMs) {
    try {
      return new KinesisSink(
          kinesis(mark, failure), stream -> {}, millis -> {}, mark, new SnapshotKeys(dir, captured), graceMs);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** A new process of the service on the same state dir: a sink of its own, all accepted. */
  KinesisSink restarted() {
    return sink(new SnapshotMark(dir.resolve("mark")), request -> null, 10_000);
  }

  /** The delete events put, as (stream, before, lsn). */
  List<String> deletesPut() throws IOException {
    List<String> deletes = new ArrayList<>();
    for (Put put : puts) {
      JsonNode event = new ObjectMapper().readTree(put.data());
      if (event.path("op").asText().equals("d")) {
        deletes.add(put.stream() + " " + event.get("before") + " " + event.at("/source/lsn"));
      }
    }
    return deletes;
  }

  @Test
  void aStopDuringTheBatchFinishesItThenPassesTheInterruptOn() throws Exception {
    SnapshotMark mark = new SnapshotMark(dir.resolve("mark"));
    // The engine's stop interrupts the thread while the second call is in flight.
    KinesisSink sink = sink(mark, new StopAtCall(2, () -> null), 10_000);
    List<ChangeEvent<String, String>> batch =
        List.of(event("customers", "1", "false"), event("orders", "2", "false"), event("orders", "3", "false"));
    Committer committer = new Committer();

    sink.handleBatch(batch, committer);

    assertEquals(List.of("customers", "orders", "orders"), puts.stream().map(Put::stream).toList());
    assertEquals(batch, committer.processed);
    assertEquals(1, committer.batchesFinished);
    assertFalse(committer.interruptedWhenFinished);
    assertTrue(Thread.currentThread().isInterrupted(), "the engine's stop must go on");
  }

  @Test
  void aStopPastTheGraceLeavesTheBatchUnmarkedForTheNextStart() {
    SnapshotMark mark = new SnapshotMark(dir.resolve("mark"));
    KinesisSink sink = sink(mark, request -> new AbortedException(), 0);
    Committer committer = new Committer();

    assertThrows(
        InterruptedException.class,
        () -> sink.handleBatch(List.of(event("orders", "1", "false")), committer));

    assertTrue(committer.processed.isEmpty());
    assertEquals(0, committer.batchesFinished);
  }

  @Test
  void aStopWhileKinesisIsDownAbandonsTheBatchAfterTheGrace() {
    SnapshotMark mark = new SnapshotMark(dir.resolve("mark"));
    StopAtCall kinesis = new StopAtCall(1, () -> new AmazonServiceException("Kinesis is down"));
    KinesisSink sink = sink(mark, kinesis, 50);
    Committer committer = new Committer();

    assertThrows(
        InterruptedException.class,
        () -> sink.handleBatch(List.of(event("orders", "1", "false")), committer));

    assertTrue(kinesis.calls > 1, "retried within the grace");
    assertTrue(committer.processed.isEmpty());
  }

  @Test
  void theMarkIsWrittenOnceTheSnapshotsLastEventIsPut() throws Exception {
    SnapshotMark mark = new SnapshotMark(dir.resolve("mark"));
    KinesisSink sink = sink(mark, request -> null, 10_000);

    sink.handleBatch(List.of(event("orders", "1", "true")), new Committer());
    assertFalse(mark.isSet());
    sink.handleBatch(List.of(event("orders", "2", "last")), new Committer());
    assertTrue(mark.isSet());
    sink.handleBatch(
        List.of(event("orders", "3", "false"), event("customers", "4", "false")), new Committer());

    assertEquals(List.of(false, false, true, true), puts.stream().map(Put::marked).toList());
    assertTrue(new SnapshotMark(dir.resolve("mark")).isSet(), "the mark outlives the process");
  }

  @Test
  void aBatchThatEndsTheSnapshotPutsItsSnapshotEventsBeforeTheMark() throws Exception {
    SnapshotMark mark = new SnapshotMark(dir.resolve("mark"));
    KinesisSink sink = sink(mark, request -> null, 10_000);

    sink.handleBatch(
        List.of(event("customers", "1", "last"), event("orders", "2", "false"), event("customers", "3", "false")),
        new Committer());

    assertEquals(
        List.of(new Put("customers", puts.get(0).data(), false), new Put("orders", puts.get(1).data(), true)),
        puts.subList(0, 2));
    assertTrue(puts.get(2).marked());
  }

  @Test
  void aSnapshotAfterACutOneDeletesTheRowsItNoLongerFinds() throws Exception {
    // The first attempt delivers three rows, then the process dies mid-snapshot.
    restarted()
        .handleBatch(
            List.of(event("orders", "1", "first", 5), event("orders", "2", "true", 5),
                event("customers", "3", "true", 5)),
            new Committer());
    // Rows 2 and 3 are deleted meanwhile; the next attempt's snapshot no longer has them.
    puts.clear();
    restarted()
        .handleBatch(
            List.of(event("orders", "1", "first", 9), event("orders", "4", "last", 9),
                event("orders", "5", "false", 10)),
            new Committer());

    assertEquals(List.of("orders {\"id\":2} 9", "customers {\"id\":3} 9"), deletesPut());
    // After the snapshot's events, before the mark and the first streamed change.
    assertEquals(
        List.of("orders", "orders", "orders", "customers", "orders"),
        puts.stream().map(Put::stream).toList());
    assertEquals(List.of(false, false, false, false, true), puts.stream().map(Put::marked).toList());
    assertEquals(
        List.of("snapshot-keys-2"),
        Files.list(dir).map(p -> p.getFileName().toString()).filter(n -> n.startsWith("snapshot-keys")).toList(),
        "the complete snapshot's keys are kept, the cut one's removed");
  }

  @Test
  void aSnapshotTakenAgainAfterACompleteOneComparesWithIt() throws Exception {
    // Complete, but its last batch's offsets not stored: the next start snapshots again.
    restarted()
        .handleBatch(List.of(event("orders", "1", "first", 5), event("orders", "2", "last", 5)), new Committer());
    assertTrue(deletesPut().isEmpty(), "a first snapshot deletes nothing");
    restarted()
        .handleBatch(List.of(event("orders", "1", "first", 7), event("orders", "3", "last", 7)), new Committer());

    assertEquals(List.of("orders {\"id\":2} 7"), deletesPut());
  }

  @Test
  void aStartThatOnlyStreamsDeletesNothingAndKeepsTheKeys() throws Exception {
    restarted().handleBatch(List.of(event("orders", "1", "true", 5)), new Committer());
    restarted().handleBatch(List.of(event("orders", "2", "false", 6)), new Committer());

    assertTrue(deletesPut().isEmpty());
    assertTrue(Files.exists(dir.resolve("snapshot-keys-1")));
  }

  @Test
  void aKeyLineACrashCutShortWasNeverPutAndIsNotDeleted() throws Exception {
    Files.writeString(dir.resolve("snapshot-keys-1"), "orders\t{\"id\":1}\norders\t{\"id\":2");
    restarted().handleBatch(List.of(event("orders", "3", "last", 9)), new Committer());

    assertEquals(List.of("orders {\"id\":1} 9"), deletesPut());
  }

  @Test
  void aTableNoLongerCapturedKeepsItsRows() throws Exception {
    restarted()
        .handleBatch(List.of(event("orders", "1", "true", 5), event("customers", "2", "true", 5)), new Committer());
    captured = Set.of("orders"); // CDC_TABLES changed before the next start
    restarted().handleBatch(List.of(event("orders", "3", "last", 9)), new Committer());

    assertEquals(List.of("orders {\"id\":1} 9"), deletesPut());
  }

  @Test
  void twoCutAttemptsThenACompleteOneDeleteEachVanishedRowOnce() throws Exception {
    restarted().handleBatch(List.of(event("orders", "1", "true", 5), event("orders", "2", "true", 5)), new Committer());
    restarted().handleBatch(List.of(event("orders", "1", "true", 6), event("orders", "2", "true", 6)), new Committer());
    restarted().handleBatch(List.of(event("orders", "1", "last", 7)), new Committer());

    assertEquals(List.of("orders {\"id\":2} 7"), deletesPut());
    assertEquals(
        List.of("snapshot-keys-3"),
        Files.list(dir).map(p -> p.getFileName().toString()).filter(n -> n.startsWith("snapshot-keys")).toList());
  }

  static ChangeEvent<String, String> record(String destination, String key, String value) {
    return new ChangeEvent<>() {
      public String key() { return key; }
      public String value() { return value; }
      public String destination() { return destination; }
      public Integer partition() { return null; }
    };
  }

  static String scanCompleted(String collection, String status) {
    return "{\"id\":\"n1\",\"aggregate_type\":\"Incremental Snapshot\",\"type\":\"TABLE_SCAN_COMPLETED\","
        + "\"additional_data\":{\"connector_name\":\"p\",\"data_collections\":\"" + collection
        + "\",\"scanned_collection\":\"" + collection + "\",\"total_rows_scanned\":\"1\","
        + "\"status\":\"" + status + "\"},\"timestamp\":1}";
  }

  @Test
  void notificationsNameTheTableWhoseScanCompleted() {
    assertEquals("public.orders", KinesisSink.scanCompleted(scanCompleted("lakehouse.public.orders", "SUCCEEDED")));
    assertEquals("public.orders", KinesisSink.scanCompleted(scanCompleted("public.orders", "EMPTY")));
    assertEquals(null, KinesisSink.scanCompleted(scanCompleted("public.orders", "NO_PRIMARY_KEY")));
    assertEquals(null, KinesisSink.scanCompleted("{\"aggregate_type\":\"Initial Snapshot\",\"type\":\"COMPLETED\"}"));
    assertEquals(null, KinesisSink.scanCompleted(null));
  }

  @Test
  void aCompletedIncrementalSnapshotDeletesTheVanishedRowsThenRecordsTheTable() throws Exception {
    SnapshotMark mark = new SnapshotMark(dir.resolve("mark"));
    CaptureState state = CaptureState.besideOffsets(dir.resolve("offsets.dat"));
    state.assumeCaptured(List.of("public.customers"));
    state.plan(List.of("public.customers", "public.orders"), false);
    // The lake holds orders 7 and 8 from an earlier capture; the database has only 7.
    IncrementalKeys incremental =
        new IncrementalKeys(
            dir,
            "p",
            (stream, put) -> {
              if (stream.equals("p.public.orders")) {
                put.accept("{\"id\":7}", "{\"op\":\"c\",\"after\":{\"id\":7},\"source\":{\"lsn\":5}}");
                put.accept("{\"id\":8}", "{\"op\":\"c\",\"after\":{\"id\":8},\"source\":{\"lsn\":6}}");
              }
            });
    incremental.begin("public.orders");
    KinesisSink sink =
        sink(mark, request -> null, 10_000)
            .capture(state, incremental, List.of(), "p.public.debezium_signal", null, 0);
    Committer committer = new Committer();

    sink.handleBatch(
        List.of(
            event("p.public.customers", "1", "false", 40),
            record("p.public.debezium_signal", "{\"id\":\"s\"}", "{\"op\":\"c\",\"source\":{\"lsn\":41}}"),
            event("p.public.orders", "7", "incremental", 42),
            record(KinesisSink.NOTIFICATION_TOPIC, "{\"id\":\"n1\"}", scanCompleted("lakehouse.public.orders", "SUCCEEDED"))),
        committer);

    assertEquals(
        List.of("p.public.customers", "p.public.orders", "p.public.orders"),
        puts.stream().map(Put::stream).toList(),
        "neither the signal table's changes nor the notification are put");
    assertEquals(List.of("p.public.orders {\"id\":8} 42"), deletesPut());
    assertEquals(4, committer.processed.size());
    assertEquals(Set.of("public.customers", "public.orders"), state.captured());
    assertEquals(List.of(), CaptureState.besideOffsets(dir.resolve("offsets.dat")).pending());
    assertFalse(incremental.anyTracked());
  }

  @Test
  void anIncrementalReadWithoutAPositionGetsTheNewestOneReadBeforeIt() throws Exception {
    SnapshotMark mark = new SnapshotMark(dir.resolve("mark"));
    KinesisSink sink = sink(mark, request -> null, 10_000);
    String read = "{\"op\":\"r\",\"after\":{\"id\":5},\"source\":{\"lsn\":null,\"ts_ms\":1,"
        + "\"snapshot\":\"incremental\"}}";
    Committer committer = new Committer();
    List<ChangeEvent<String, String>> batch =
        List.of(event("orders", "1", "false", 70), record("orders", "{\"id\":5}", read), event("orders", "2", "false", 90));

    sink.handleBatch(batch, committer);

    ObjectMapper json = new ObjectMapper();
    List<Long> lsns = new ArrayList<>();
    for (Put put : puts) {
      lsns.add(json.readTree(put.data()).at("/source/lsn").asLong());
    }
    assertEquals(List.of(70L, 70L, 90L), lsns);
    assertEquals(batch, committer.processed, "the engine is told of its own events");
  }

  @Test
  void aShiftedCaptureShiftsEveryPositionItPutsButTellsTheEngineOfItsOwnEvents() throws Exception {
    SnapshotMark mark = new SnapshotMark(dir.resolve("mark"));
    CaptureState state = CaptureState.besideOffsets(dir.resolve("offsets.dat"));
    state.assumeCaptured(List.of("public.orders"));
    KinesisSink sink =
        sink(mark, request -> null, 10_000)
            .capture(state, new IncrementalKeys(dir, "p", (stream, put) -> {}), List.of(), null, 30L, 1_000);
    String read = "{\"op\":\"r\",\"after\":{\"id\":5},\"source\":{\"ts_ms\":1,"
        + "\"snapshot\":\"incremental\"}}";
    List<ChangeEvent<String, String>> batch =
        List.of(event("orders", "1", "false", 40), record("orders", "{\"id\":5}", read));
    Committer committer = new Committer();

    sink.handleBatch(batch, committer);

    ObjectMapper json = new ObjectMapper();
    assertEquals(1_040, json.readTree(puts.get(0).data()).at("/source/lsn").asLong());
    assertEquals(1_000, json.readTree(puts.get(0).data()).at("/source/lsn_shift").asLong());
    assertEquals(1_040, json.readTree(puts.get(1).data()).at("/source/lsn").asLong());
    assertEquals(batch, committer.processed);
  }

  @Test
  void aNotificationAmongTheSnapshotsEventsDoesNotEndIt() throws Exception {
    SnapshotMark mark = new SnapshotMark(dir.resolve("mark"));
    KinesisSink sink = sink(mark, request -> null, 10_000);
    String started =
        "{\"aggregate_type\":\"Initial Snapshot\",\"type\":\"STARTED\",\"additional_data\":{}}";

    sink.handleBatch(
        List.of(
            record(KinesisSink.NOTIFICATION_TOPIC, "{\"id\":\"n\"}", started),
            event("orders", "1", "first"),
            event("orders", "2", "true")),
        new Committer());

    assertFalse(mark.isSet(), "the snapshot goes on");
    assertEquals(List.of("orders", "orders"), puts.stream().map(Put::stream).toList());
    sink.handleBatch(List.of(event("orders", "3", "last")), new Committer());
    assertTrue(mark.isSet());
  }
}
