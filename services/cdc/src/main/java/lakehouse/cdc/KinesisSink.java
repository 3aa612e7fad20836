package lakehouse.cdc;

import com.amazonaws.AbortedException;
import com.amazonaws.services.kinesis.AmazonKinesis;
import com.amazonaws.services.kinesis.model.PutRecordsRequest;
import com.amazonaws.services.kinesis.model.PutRecordsRequestEntry;
import com.amazonaws.services.kinesis.model.PutRecordsResult;
import com.amazonaws.services.kinesis.model.PutRecordsResultEntry;
import io.debezium.engine.ChangeEvent;
import io.debezium.engine.DebeziumEngine;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Debezium's change events to Kinesis, one stream per captured table (the event's
 * destination, {@code <topic.prefix>.<schema>.<table>}), partitioned by the row's key so a
 * row's changes share a shard.
 *
 * <p>A batch is marked processed only once Kinesis has acknowledged every record of it, so
 * the offsets the engine stores never run ahead of what the stream holds: a crash replays
 * the unacknowledged tail (at-least-once; the job's ordering by LSN absorbs the duplicates).
 * The engine's stop interrupts the batch in flight; it is finished first (Stop), so a stop
 * leaves nothing in the stream that its stored offsets do not cover.
 * Failed entries of a PutRecords call are retried, with backoff, until they are accepted:
 * the engine waits meanwhile instead of skipping a change.
 *
 * <p>While the initial snapshot is delivered, its keys are recorded first (SnapshotKeys);
 * once it is complete, the rows a cut earlier attempt delivered and it did not find get
 * delete events, then the mark is set (SnapshotMark), then streamed changes follow.
 */
public final class KinesisSink implements DebeziumEngine.ChangeConsumer<ChangeEvent<String, String>> {
  private static final Logger LOG = LoggerFactory.getLogger(KinesisSink.class);
  private static final com.fasterxml.jackson.databind.ObjectMapper JSON =
      new com.fasterxml.jackson.databind.ObjectMapper();
  // Kinesis limits: 500 records and 5 MiB per PutRecords call, 256 characters of partition key.
  /** Debezium's heartbeat records go to topics named with this prefix; none is written. */
  static final String HEARTBEAT_PREFIX = "__debezium-heartbeat";
  /**
   * Debezium's notifications (notification.enabled.channels=sink) come to the sink as
   * records of this topic, in order with the change events; none is written. An
   * incremental snapshot's "table scan completed" is one: every row of the scan is before it.
   */
  static final String NOTIFICATION_TOPIC = "__debezium-notification";

  static final int MAX_RECORDS_PER_CALL = 500;
  static final int MAX_BYTES_PER_CALL = 5 * 1024 * 1024;
  static final int MAX_PARTITION_KEY = 256;
  /** How long a stop waits for the batch in flight (the supervisor kills after 20 s). */
  static final long STOP_GRACE_MS = 10_000;

  private final AmazonKinesis kinesis;
  private final Consumer<String> streamEnsurer;
  private final Sleeper sleeper;
  private final SnapshotMark mark;
  private final SnapshotKeys keys;
  private final long stopGraceMs;
  // The tables' bookkeeping (CaptureState, IncrementalKeys); null in tests that need none.
  private CaptureState state;
  private IncrementalKeys incremental;
  private List<String> initialTables = List.of();
  private String signalStream;
  private long newestLsn = Long.MIN_VALUE;
  private long lsnShift;
  // Read and written by the engine's thread only.
  private boolean snapshotDone;
  private final AtomicLong written = new AtomicLong();
  private volatile long lastBatchMillis;

  /** Sleeps between retries; a test passes one that does not. */
  @FunctionalInterface
  public interface Sleeper {
    void sleep(long millis) throws InterruptedException;
  }

  public KinesisSink(
      AmazonKinesis kinesis,
      Consumer<String> streamEnsurer,
      Sleeper sleeper,
      SnapshotMark mark,
      SnapshotKeys keys,
      long stopGraceMs) {
    this.kinesis = kinesis;
    this.streamEnsurer = streamEnsurer;
    this.sleeper = sleeper;
    this.mark = mark;
    this.keys = keys;
    this.stopGraceMs = stopGraceMs;
  }

  /**
   * The tables' record: `initialTables` are those this start's initial snapshot reads
   * (recorded once it is delivered), the signal table's stream is never written.
   */
  KinesisSink capture(
      CaptureState state,
      IncrementalKeys incremental,
      List<String> initialTables,
      String signalStream,
      Long resumedFrom,
      long lsnShift) {
    this.lsnShift = lsnShift;
    if (resumedFrom != null) {
      // The stored position (shifted as events are): every event after it is past it.
      newestLsn = resumedFrom + lsnShift;
    }
    this.state = state;
    this.incremental = incremental;
    this.initialTables = List.copyOf(initialTables);
    this.signalStream = signalStream;
    return this;
  }

  public long written() {
    return written.get();
  }

  public long lastBatchMillis() {
    return lastBatchMillis;
  }

  @Override
  public void handleBatch(
      List<ChangeEvent<String, String>> records,
      DebeziumEngine.RecordCommitter<ChangeEvent<String, String>> committer)
      throws InterruptedException {
    Stop stop = new Stop(stopGraceMs);
    // The engine is told of its own events (below); what is put may be shifted copies.
    List<ChangeEvent<String, String>> events = lsnShift == 0 ? records : shifted(records);
    if (snapshotDone) {
      putStreamed(events, stop);
    } else {
      deliverSnapshot(events, stop);
    }
    for (ChangeEvent<String, String> record : records) {
      committer.markProcessed(record);
    }
    committer.markBatchFinished();
    lastBatchMillis = System.currentTimeMillis();
    if (stop.requested) {
      Thread.currentThread().interrupt(); // the engine's stop goes on, the batch now done
    }
  }

  /**
   * A batch while the snapshot may still be going on: its snapshot events' keys recorded,
   * then the events put. Once the snapshot is complete (its last event, or the first
   * streamed one), the rows that cut attempts delivered and it did not find are deleted,
   * the mark is set, then the streamed rest is put.
   */
  private void deliverSnapshot(List<ChangeEvent<String, String>> records, Stop stop)
      throws InterruptedException {
    List<EventSource> sources = new ArrayList<>();
    int end = records.size();
    boolean complete = false;
    for (int i = 0; i < records.size() && !complete; i++) {
      if (isNotification(records.get(i))) {
        // Debezium's notifications (the initial snapshot's own "started", ...) come in
        // order with the snapshot's events: neither a row nor the end of the snapshot.
        sources.add(EventSource.of(null));
        continue;
      }
      EventSource source = EventSource.of(records.get(i).value());
      if (!source.fromSnapshot()) {
        end = i;
        complete = true;
      } else {
        sources.add(source);
        if (source.endsSnapshot()) {
          end = i + 1;
          complete = true;
        }
      }
    }
    List<ChangeEvent<String, String>> snapshot = records.subList(0, end);
    try {
      keys.record(snapshot, sources);
      put(snapshot, stop);
      if (!complete) {
        return;
      }
      put(keys.deletesForVanishedRows(), stop);
      mark.set();
      keys.forgetEarlier();
      if (state != null) {
        state.initialSnapshotDelivered(initialTables);
      }
    } catch (IOException e) {
      throw new IllegalStateException(
          "cannot write the snapshot's state beside " + mark.file() + " (check the CDC state "
              + "directory's disk): " + e, e);
    }
    snapshotDone = true;
    putStreamed(records.subList(end, records.size()), stop);
  }

  /**
   * Streamed records (incremental snapshots' reads among them) put. The keys of those of a
   * table being snapshotted are recorded first; a notification that a table's scan is
   * complete then puts the deletes of the rows it no longer has and records the table.
   */
  private void putStreamed(List<ChangeEvent<String, String>> records, Stop stop)
      throws InterruptedException {
    List<String> completed = new ArrayList<>();
    List<ChangeEvent<String, String>> positioned = new ArrayList<>(records.size());
    for (ChangeEvent<String, String> record : records) {
      if (isNotification(record)) {
        ScanEnd end = state == null ? null : scanEnd(record.value());
        if (end != null && state.isPending(end.table())) {
          if (end.succeeded()) {
            completed.add(end.table());
          } else {
            failed(end);
          }
        }
        positioned.add(record);
      } else {
        positioned.add(positioned(record));
      }
    }
    if (incremental == null) {
      put(positioned, stop);
      return;
    }
    records = positioned;
    try {
      incremental.record(records);
      put(records, stop);
      for (String table : completed) {
        long tsMs = System.currentTimeMillis();
        put(incremental.deletesForVanishedRows(table, newestLsn, tsMs), stop);
        state.delivered(table);
        incremental.done(table);
        LOG.info("{}: its existing rows are delivered; streaming its changes", table);
      }
    } catch (IOException e) {
      throw new IllegalStateException(
          "cannot write the capture's state beside " + mark.file() + " (check the CDC state "
              + "directory's disk): " + e, e);
    }
  }

  /**
   * The events with lsnShift added to their log positions (source.lsn_shift says by how
   * much): a capture started over on a server whose positions are behind the lake's would
   * otherwise have every change lose to the lake's older ones. Events without a position
   * are left as they are (positioned() dates incremental reads from shifted ones).
   */
  List<ChangeEvent<String, String>> shifted(List<ChangeEvent<String, String>> records) {
    List<ChangeEvent<String, String>> out = new ArrayList<>(records.size());
    for (ChangeEvent<String, String> record : records) {
      Long lsn = EventSource.of(record.value()).lsn();
      out.add(
          lsn == null
              ? record
              : withSource(record, source -> source.put("lsn", lsn + lsnShift).put("lsn_shift", lsnShift)));
    }
    return out;
  }

  /** A copy of the event whose source block `edit` changed; the event itself if it has none. */
  static ChangeEvent<String, String> withSource(
      ChangeEvent<String, String> record,
      java.util.function.Consumer<com.fasterxml.jackson.databind.node.ObjectNode> edit) {
    try {
      com.fasterxml.jackson.databind.node.ObjectNode event =
          (com.fasterxml.jackson.databind.node.ObjectNode) JSON.readTree(record.value());
      com.fasterxml.jackson.databind.JsonNode payload =
          event.path("payload").isObject() ? event.path("payload") : event;
      edit.accept((com.fasterxml.jackson.databind.node.ObjectNode) payload.path("source"));
      String value = JSON.writeValueAsString(event);
      return new ChangeEvent<>() {
        public String key() {
          return record.key();
        }

        public String value() {
          return value;
        }

        public String destination() {
          return record.destination();
        }

        public Integer partition() {
          return record.partition();
        }
      };
    } catch (IOException | ClassCastException e) {
      return record;
    }
  }

  /**
   * The event with a log position the job can order it by. Debezium's PostgreSQL connector
   * dates an incremental snapshot's reads with no source.lsn (the job would quarantine
   * them): they get the newest position read before them, which is past every change the
   * read row reflects (a change committed during the chunk's window drops the row from
   * it) and before any later change. Every other event moves that position on.
   */
  ChangeEvent<String, String> positioned(ChangeEvent<String, String> record) {
    EventSource source = EventSource.of(record.value());
    boolean incrementalRead = "incremental".equals(source.snapshot());
    if (!incrementalRead) {
      if (source.lsn() != null) {
        newestLsn = Math.max(newestLsn, source.lsn());
      }
      return record;
    }
    if (source.lsn() != null && source.lsn() >= newestLsn) {
      newestLsn = source.lsn();
      return record;
    }
    if (newestLsn == Long.MIN_VALUE) {
      return record; // nothing read yet, nor stored: left to the job's quarantine
    }
    long at = newestLsn;
    return withSource(record, block -> block.put("lsn", at));
  }

  static boolean isNotification(ChangeEvent<String, String> record) {
    return record.destination() != null && record.destination().startsWith(NOTIFICATION_TOPIC);
  }

  /** How a table's incremental snapshot scan ended, by Debezium's notification. */
  record ScanEnd(String table, String status) {
    /** SUCCEEDED, or EMPTY (a table without rows): every row it has was read. */
    boolean succeeded() {
      return "SUCCEEDED".equals(status) || "EMPTY".equals(status);
    }
  }

  /** A scan that did not read the table (no primary key, an SQL error, ...): said, kept. */
  private void failed(ScanEnd end) {
    LOG.error(
        "{}: Debezium's incremental snapshot ended with status {}: its existing rows are not "
            + "all in the lake. A table needs a primary key to be snapshotted; fix the cause, "
            + "then restart the CDC service, which asks for the snapshot again",
        end.table(),
        end.status());
    try {
      state.failed(end.table(), end.status());
    } catch (IOException e) {
      throw new IllegalStateException(
          "cannot write the capture's state beside " + mark.file() + ": " + e, e);
    }
  }

  /** The table ({@code schema.table}) whose scan completed successfully, else null. */
  static String scanCompleted(String value) {
    ScanEnd end = scanEnd(value);
    return end != null && end.succeeded() ? end.table() : null;
  }

  /**
   * The end of a table's incremental snapshot scan, from Debezium's TABLE_SCAN_COMPLETED
   * notification (the table in scanned_collection, with the database in front or not), or
   * null for any other record.
   */
  static ScanEnd scanEnd(String value) {
    if (value == null) {
      return null;
    }
    try {
      com.fasterxml.jackson.databind.JsonNode event = JSON.readTree(value);
      com.fasterxml.jackson.databind.JsonNode payload =
          event.path("payload").isObject() ? event.path("payload") : event;
      if (!"Incremental Snapshot".equals(payload.path("aggregate_type").asText())
          || !"TABLE_SCAN_COMPLETED".equals(payload.path("type").asText())) {
        return null;
      }
      com.fasterxml.jackson.databind.JsonNode data = payload.path("additional_data");
      String scanned = data.path("scanned_collection").asText(data.path("data_collections").asText(""));
      String[] parts = scanned.split("\\.");
      if (parts.length < 2) {
        return null;
      }
      return new ScanEnd(
          parts[parts.length - 2] + "." + parts[parts.length - 1], data.path("status").asText(""));
    } catch (IOException notJson) {
      return null;
    }
  }

  /** The records' change events put to their streams, in arrival order per stream. */
  void put(List<ChangeEvent<String, String>> records, Stop stop) throws InterruptedException {
    Map<String, List<PutRecordsRequestEntry>> byStream = new LinkedHashMap<>();
    for (ChangeEvent<String, String> record : records) {
      if (record.value() == null) {
        continue; // a tombstone (tombstones.on.delete=false makes none): nothing to put
      }
      if (record.destination().startsWith(HEARTBEAT_PREFIX)
          || record.destination().startsWith(NOTIFICATION_TOPIC)
          || record.destination().equals(signalStream)) {
        continue; // only moves the offsets on, which markProcessed does
      }
      byStream
          .computeIfAbsent(record.destination(), d -> new ArrayList<>())
          .add(
              new PutRecordsRequestEntry()
                  .withPartitionKey(partitionKey(record.key()))
                  .withData(ByteBuffer.wrap(record.value().getBytes(StandardCharsets.UTF_8))));
    }
    for (Map.Entry<String, List<PutRecordsRequestEntry>> stream : byStream.entrySet()) {
      streamEnsurer.accept(stream.getKey());
      for (List<PutRecordsRequestEntry> call : calls(stream.getValue())) {
        putAll(stream.getKey(), call, stop);
      }
    }
  }

  /** The row's key (Debezium's JSON key) as a partition key within Kinesis' 256 characters. */
  static String partitionKey(String key) {
    if (key == null || key.isEmpty()) {
      return "-";
    }
    if (key.length() <= MAX_PARTITION_KEY) {
      return key;
    }
    try {
      byte[] digest = MessageDigest.getInstance("SHA-256").digest(key.getBytes(StandardCharsets.UTF_8));
      return HexFormat.of().formatHex(digest);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is missing from this JVM", e);
    }
  }

  /** Entries split into PutRecords calls within the record and byte limits, order kept. */
  static List<List<PutRecordsRequestEntry>> calls(List<PutRecordsRequestEntry> entries) {
    List<List<PutRecordsRequestEntry>> calls = new ArrayList<>();
    List<PutRecordsRequestEntry> current = new ArrayList<>();
    long bytes = 0;
    for (PutRecordsRequestEntry entry : entries) {
      long size = entry.getData().remaining() + entry.getPartitionKey().length();
      if (!current.isEmpty()
          && (current.size() == MAX_RECORDS_PER_CALL || bytes + size > MAX_BYTES_PER_CALL)) {
        calls.add(current);
        current = new ArrayList<>();
        bytes = 0;
      }
      current.add(entry);
      bytes += size;
    }
    if (!current.isEmpty()) {
      calls.add(current);
    }
    return calls;
  }

  /**
   * The engine's stop, seen as an interrupt of the thread that puts a batch. The batch in
   * flight is finished first (the interrupt cleared, the puts retried for up to the
   * grace), so that every change already put is covered by the offsets stored at
   * the stop; past the grace the batch is abandoned unmarked and replayed by the next start.
   */
  static final class Stop {
    private final long graceMs;
    boolean requested;
    long deadline;

    Stop(long graceMs) {
      this.graceMs = graceMs;
    }

    /** An interrupt seen: the first starts the grace, one past it abandons the batch. */
    void interrupted(String stream) throws InterruptedException {
      Thread.interrupted();
      if (!requested) {
        requested = true;
        deadline = System.currentTimeMillis() + graceMs;
        LOG.info("stop requested: finishing the batch in flight (up to {} ms)", graceMs);
      } else {
        checkGrace(stream);
      }
    }

    /** Past the grace (Kinesis still refusing), the batch is abandoned unmarked. */
    void checkGrace(String stream) throws InterruptedException {
      if (requested && System.currentTimeMillis() >= deadline) {
        throw new InterruptedException(
            "stopped before Kinesis accepted the batch in flight for stream " + stream
                + ": it is not marked processed and the next start replays it");
      }
    }
  }

  /** Puts every entry, retrying the rejected ones (and failed calls) until all are accepted. */
  void putAll(String stream, List<PutRecordsRequestEntry> entries, Stop stop)
      throws InterruptedException {
    List<PutRecordsRequestEntry> pending = entries;
    long backoff = 100;
    int attempt = 0;
    while (!pending.isEmpty()) {
      if (attempt > 0) {
        stop.checkGrace(stream);
      }
      attempt++;
      List<PutRecordsRequestEntry> failed = new ArrayList<>();
      try {
        PutRecordsResult result =
            kinesis.putRecords(new PutRecordsRequest().withStreamName(stream).withRecords(pending));
        List<PutRecordsResultEntry> answers = result.getRecords();
        for (int i = 0; i < pending.size(); i++) {
          if (answers.get(i).getErrorCode() != null) {
            failed.add(pending.get(i));
          }
        }
        written.addAndGet(pending.size() - failed.size());
        if (!failed.isEmpty()) {
          LOG.warn(
              "KinesisRetry: {} of {} records rejected by stream {} ({}: {}); retrying in {} ms",
              failed.size(),
              pending.size(),
              stream,
              answers.stream().filter(a -> a.getErrorCode() != null).findFirst().get().getErrorCode(),
              answers.stream().filter(a -> a.getErrorCode() != null).findFirst().get().getErrorMessage(),
              backoff);
        }
      } catch (RuntimeException e) {
        if (e instanceof AbortedException || Thread.currentThread().isInterrupted()) {
          // The SDK's answer to an interrupt: the call may or may not have reached
          // Kinesis, so it is made again (a repeat is absorbed downstream); no backoff.
          stop.interrupted(stream);
          continue;
        }
        failed = pending;
        LOG.warn(
            "KinesisRetry: PutRecords of {} records to stream {} failed (attempt {}): {}; "
                + "retrying in {} ms. Check that the Kinesis endpoint is up and the stream exists.",
            pending.size(),
            stream,
            attempt,
            e.toString(),
            backoff);
      }
      pending = failed;
      if (!pending.isEmpty()) {
        try {
          sleeper.sleep(backoff);
        } catch (InterruptedException e) {
          stop.interrupted(stream);
        }
        backoff = Math.min(backoff * 2, 5_000);
      }
    }
  }
}
