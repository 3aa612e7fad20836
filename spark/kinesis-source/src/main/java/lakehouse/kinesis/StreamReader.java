package lakehouse.kinesis;

import com.amazonaws.services.kinesis.AmazonKinesis;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.apache.spark.sql.connector.read.InputPartition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The driver side of one stream of the source ({@link KinesisMicroBatchStream} holds one per
 * stream): its client and shard listing, the records read while deciding a batch's end (cached
 * until the batch commits), and the batch's input partitions.
 *
 * <p>A stream that does not exist is reported once while it stays missing and read from its trim
 * horizon when it appears; its checkpointed position, if any, is kept meanwhile.
 */
final class StreamReader {
  private static final Logger LOG = LoggerFactory.getLogger(StreamReader.class);

  /** What one batch reads of this stream, decided before its shards are fetched. */
  static final class Plan {
    final StreamOffset base;
    final List<String> readable;
    final Set<String> closed;

    Plan(StreamOffset base, List<String> readable, Set<String> closed) {
      this.base = base;
      this.readable = readable;
      this.closed = closed;
    }
  }

  final String name;
  private final KinesisOptions options;
  private final RecordCache cache = new RecordCache();
  /** Under AvailableNow: shards read up to their tip, not to be read again in this run. */
  private final Set<String> caughtUp = ConcurrentHashMap.newKeySet();
  /** Each shard's MillisBehindLatest at its last read. */
  private final Map<String, Long> millisBehindLatest = new ConcurrentHashMap<>();
  /** Shards kept in the offset though the last listing did not show them (warned once each). */
  private final Set<String> unlisted = ConcurrentHashMap.newKeySet();
  private AmazonKinesis client;
  private ShardLister lister;
  private StreamInfo streamInfo;
  private RetentionGuard retentionGuard;
  private ExecutorService fetchPool;
  private boolean missing;

  StreamReader(KinesisOptions streamOptions) {
    this.options = streamOptions;
    this.name = streamOptions.streamName;
  }

  /** Whether the last listing found no such stream. */
  synchronized boolean missing() {
    return missing;
  }

  private synchronized void connect() {
    if (client == null) {
      client = KinesisClientFactory.create(options);
      lister = new ShardLister(client, options);
      fetchPool = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "kinesis-fetch-" + name);
        t.setDaemon(true);
        return t;
      });
    }
  }

  /**
   * The stream's incarnation (it cannot change under a name) and retention, asked once per query
   * run: a retention raised to let a failed job go on takes effect when it is restarted.
   */
  private synchronized StreamInfo streamInfo() {
    if (streamInfo == null) {
      streamInfo = lister.streamInfo();
      retentionGuard = new RetentionGuard(name, streamInfo.retentionMillis);
    }
    return streamInfo;
  }

  /** The position a query starts at, or empty while the stream does not exist. */
  Optional<StreamOffset> initial(KinesisOptions.StartingPosition start, long startSecond) {
    connect();
    try {
      StreamOffset offset = ShardLineage.initial(name, lister.list(), start, startSecond)
          .withIdentity(streamInfo().identity);
      found();
      return Optional.of(offset);
    } catch (StreamNotFoundException e) {
      reportMissing(e);
      return Optional.empty();
    }
  }

  /**
   * The batch's starting point in this stream: {@code start} brought up to date with the shard
   * listing; a stream the checkpoint does not know starts at its trim horizon. Empty while the
   * stream does not exist.
   */
  Optional<Plan> plan(Optional<StreamOffset> start, boolean availableNow) {
    connect();
    List<ShardDescription> listed;
    String identity;
    try {
      listed = lister.list();
      identity = streamInfo().identity;
    } catch (StreamNotFoundException e) {
      reportMissing(e);
      return Optional.empty();
    }
    found();
    if (start.isPresent() && start.get().streamIdentity != null
        && !start.get().streamIdentity.equals(identity)) {
      throw new IllegalStateException("The checkpoint holds positions in Kinesis stream '" + name
          + "' as it was (" + start.get().streamIdentity + "), but that stream was deleted and"
          + " recreated (now " + identity + "): its sequence numbers mean nothing in the new one,"
          + " and reading on would skip or repeat records. Use a new checkpoint location for the"
          + " new stream.");
    }
    if (start.isEmpty()) {
      LOG.info("Kinesis stream '{}' is new to this query: read from its trim horizon", name);
    }
    StreamOffset base = start.isPresent()
        ? ShardLineage.reconcile(start.get(), listed).withIdentity(identity)
        : ShardLineage.initial(name, listed, KinesisOptions.StartingPosition.TRIM_HORIZON, 0L)
            .withIdentity(identity);
    warnUnlisted(ShardLineage.unlisted(base, listed));
    List<String> readable = new ArrayList<>(ShardLineage.readableShards(base));
    Set<String> closed = new HashSet<>();
    listed.stream().filter(d -> d.closed).forEach(d -> closed.add(d.shardId));
    if (availableNow) {
      // A caught-up shard is done for this run, unless Kinesis has closed it: then it is read
      // once more to see its end, so that its children (which hold the newer records) are read.
      readable.removeIf(id -> caughtUp.contains(id) && !closed.contains(id));
    }
    return Optional.of(new Plan(base, readable, closed));
  }

  /** Starts reading the budgeted shards of a plan, in parallel. */
  Map<String, Future<FetchResult>> fetch(Plan plan, Map<String, Integer> budgets,
      long bytesPerShard, long deadline) {
    Map<String, Future<FetchResult>> futures = new LinkedHashMap<>();
    for (Map.Entry<String, Integer> e : budgets.entrySet()) {
      ShardPosition from = plan.base.get(e.getKey()).orElseThrow();
      retentionGuard.beforeFirstRead(from, System.currentTimeMillis());
      boolean closed = plan.closed.contains(from.shardId);
      int budget = e.getValue();
      futures.put(e.getKey(), fetchPool.submit(() -> ShardFetch.fetch(
          new ShardCursor(client, options, from.shardId, from.nextReadStart()), budget,
          bytesPerShard, options.maxRecordsPerCall, deadline, System::currentTimeMillis, closed)));
    }
    return futures;
  }

  /** The batch's end in this stream, from what the shards returned; their records are cached. */
  StreamOffset end(Plan plan, Map<String, FetchResult> results) {
    long now = System.currentTimeMillis();
    StreamOffset end = plan.base;
    for (Map.Entry<String, FetchResult> e : results.entrySet()) {
      FetchResult result = e.getValue();
      if (result.millisBehindLatest != null) {
        millisBehindLatest.put(e.getKey(), result.millisBehindLatest);
      }
      ShardPosition from = plan.base.get(e.getKey()).orElseThrow();
      retentionGuard.afterRead(from, result.lagMillis(now));
      ShardPosition to = from;
      if (!result.records.isEmpty()) {
        to = to.consumedThrough(result.lastSequenceNumber(), result.lastArrivalMillis());
        cache.put(e.getKey(), from.nextReadStart(), result);
      }
      if (result.drained) {
        to = to.asDrained();
        LOG.info("Kinesis shard {} of {} is drained; its children become readable",
            e.getKey(), name);
      }
      end = end.with(to);
    }
    return end;
  }

  /** The batch's partitions of this stream: one per shard that moved between start and end. */
  List<InputPartition> partitions(Optional<StreamOffset> start, StreamOffset end) {
    List<InputPartition> partitions = new ArrayList<>();
    for (ShardPosition to : end.shards()) {
      if (to.lastSequenceNumber == null) {
        continue;
      }
      // A shard (or stream) missing from the start offset is new in this batch: it starts at
      // TRIM_HORIZON.
      ShardPosition from = start.flatMap(s -> s.get(to.shardId))
          .orElse(ShardPosition.trimHorizon(to.shardId, to.parentShardIds));
      if (to.lastSequenceNumber.equals(from.lastSequenceNumber)) {
        continue;
      }
      StartingPoint rangeStart = from.nextReadStart();
      FetchResult cached = cache.get(to.shardId, rangeStart, to.lastSequenceNumber);
      List<KinesisRecord> inline = null;
      if (cached != null && cached.approximateBytes() <= options.inlineRecordsMaxBytes) {
        inline = cached.records;
      } else {
        LOG.info("Kinesis stream {} shard {}: {} range ({}, {}] from the stream on the executor",
            name, to.shardId, cached == null ? "replaying" : "re-reading large", rangeStart,
            to.lastSequenceNumber);
      }
      partitions.add(new KinesisInputPartition(options, to.shardId, rangeStart,
          to.lastSequenceNumber, inline));
    }
    return partitions;
  }

  /**
   * Under AvailableNow, once a batch is taken: its shards that reached their tip (or end) are not
   * read again in this run.
   */
  void noteCaughtUp(Map<String, FetchResult> results) {
    results.forEach((shard, result) -> {
      if (result.caughtUp || result.drained) {
        caughtUp.add(shard);
      }
    });
  }

  void commit(StreamOffset end) {
    cache.evictCommitted(end);
  }

  void prepareForTriggerAvailableNow() {
    caughtUp.clear();
  }

  /** Each shard's MillisBehindLatest at its last read. */
  Map<String, Long> millisBehindLatest() {
    return millisBehindLatest;
  }

  synchronized void stop() {
    cache.clear();
    if (fetchPool != null) {
      fetchPool.shutdownNow();
    }
    if (client != null) {
      client.shutdown();
    }
  }

  private synchronized void reportMissing(StreamNotFoundException e) {
    if (!missing) {
      LOG.warn("{} The query reads its other streams on and keeps this one's position, if it had"
          + " one; a stream it never read is read from its trim horizon once it exists (one"
          + " recreated under the name after it was read stops the query: its old positions mean"
          + " nothing in the new one).", e.getMessage());
    }
    missing = true;
    streamInfo = null; // asked again once it exists: it may be a new incarnation
  }

  private synchronized void found() {
    if (missing) {
      LOG.info("Kinesis stream '{}' exists again: reading it", name);
    }
    missing = false;
  }

  /** Once per shard while it stays unlisted: every batch would repeat it otherwise. */
  private void warnUnlisted(List<String> shardIds) {
    unlisted.retainAll(shardIds);
    for (String id : shardIds) {
      if (unlisted.add(id)) {
        LOG.warn("Kinesis shard {} of '{}' is not in the shard listing, but the query has not"
            + " read it to its end: its position is kept. If the shard is really gone, reading it"
            + " fails and names what to do.", id, name);
      }
    }
  }
}
