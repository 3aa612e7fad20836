package lakehouse.kinesis;

import com.amazonaws.services.kinesis.AmazonKinesis;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.connector.read.PartitionReaderFactory;
import org.apache.spark.sql.connector.read.streaming.CompositeReadLimit;
import org.apache.spark.sql.connector.read.streaming.MicroBatchStream;
import org.apache.spark.sql.connector.read.streaming.Offset;
import org.apache.spark.sql.connector.read.streaming.ReadLimit;
import org.apache.spark.sql.connector.read.streaming.ReadMaxRows;
import org.apache.spark.sql.connector.read.streaming.ReportsSourceMetrics;
import org.apache.spark.sql.connector.read.streaming.SupportsTriggerAvailableNow;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The driver side of the source.
 *
 * <p>A batch's end must be decided on the driver, once, so that a replay after a crash reads the
 * very same records. So latestOffset() reads every readable shard (in parallel, bounded by the
 * batch budget) and returns the last sequence number read per shard. The records read are cached
 * and handed to the shard's input partition by planInputPartitions(); on a cache miss (a replay
 * after restart) the partition re-reads exactly (start, end] from Kinesis on the executor.
 * commit() frees the cache.
 */
final class KinesisMicroBatchStream
    implements MicroBatchStream, SupportsTriggerAvailableNow, ReportsSourceMetrics {
  private static final Logger LOG = LoggerFactory.getLogger(KinesisMicroBatchStream.class);

  private final KinesisOptions options;
  private final String checkpointLocation;
  private final RecordCache cache = new RecordCache();
  /** Under AvailableNow: shards read up to their tip, not to be read again in this run. */
  private final Set<String> caughtUp = ConcurrentHashMap.newKeySet();
  /** Each shard's MillisBehindLatest at its last read (metrics()). */
  private final Map<String, Long> millisBehindLatest = new ConcurrentHashMap<>();
  /** Shards kept in the offset though the last listing did not show them (warned once each). */
  private final Set<String> unlisted = ConcurrentHashMap.newKeySet();
  private AmazonKinesis client;
  private ShardLister lister;
  private StreamInfo streamInfo;
  private RetentionGuard retentionGuard;
  private ExecutorService fetchPool;
  private long batchCounter;
  private boolean availableNow;

  KinesisMicroBatchStream(KinesisOptions options, String checkpointLocation) {
    this.options = options;
    this.checkpointLocation = checkpointLocation;
  }

  /**
   * The stream's incarnation (it cannot change under a name) and retention, asked once per query
   * run: a retention raised to let a failed job go on takes effect when it is restarted.
   */
  private synchronized StreamInfo streamInfo() {
    if (streamInfo == null) {
      streamInfo = lister.streamInfo();
      retentionGuard = new RetentionGuard(options.streamName, streamInfo.retentionMillis);
    }
    return streamInfo;
  }

  private synchronized AmazonKinesis client() {
    if (client == null) {
      client = KinesisClientFactory.create(options);
      lister = new ShardLister(client, options);
      fetchPool = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "kinesis-fetch-" + options.streamName);
        t.setDaemon(true);
        return t;
      });
    }
    return client;
  }

  @Override
  public Offset initialOffset() {
    client();
    InitialOffsetStore store = new InitialOffsetStore(checkpointLocation,
        SparkSession.active().sparkContext().hadoopConfiguration());
    // Whole seconds: what GetShardIterator(AT_TIMESTAMP) can be given (ShardCursor). LATEST so
    // includes records from the start of the second the query starts in.
    long startSecond = Math.floorDiv(System.currentTimeMillis(), 1000L) * 1000L;
    return new KinesisOffset(store.loadOrCreate(() ->
        ShardLineage.initial(options.streamName, lister.list(), options.startingPosition,
            startSecond).withIdentity(streamInfo().identity)));
  }

  @Override
  public Offset deserializeOffset(String json) {
    StreamOffset state = StreamOffset.fromJson(json);
    if (state.streamName != null && !state.streamName.equals(options.streamName)) {
      throw new IllegalStateException("The checkpoint belongs to Kinesis stream '"
          + state.streamName + "', but the query reads '" + options.streamName
          + "': use a new checkpoint location.");
    }
    return new KinesisOffset(state);
  }

  @Override
  public ReadLimit getDefaultReadLimit() {
    return options.maxRecordsPerTrigger().isPresent()
        ? ReadLimit.maxRows(options.maxRecordsPerTrigger().getAsLong())
        : ReadLimit.allAvailable();
  }

  @Override
  public void prepareForTriggerAvailableNow() {
    availableNow = true;
    caughtUp.clear();
  }

  @Override
  public Offset latestOffset() {
    throw new UnsupportedOperationException(
        "latestOffset(Offset, ReadLimit) should be called instead of this method");
  }

  @Override
  public Offset latestOffset(Offset startOffset, ReadLimit limit) {
    client();
    StreamOffset start = state(startOffset);
    String identity = streamInfo().identity;
    if (start.streamIdentity != null && !start.streamIdentity.equals(identity)) {
      throw new IllegalStateException("The checkpoint " + checkpointLocation + " holds positions in"
          + " Kinesis stream '" + options.streamName + "' as it was (" + start.streamIdentity
          + "), but that stream was deleted and recreated (now " + identity + "): its sequence"
          + " numbers mean nothing in the new one, and reading on would skip or repeat records."
          + " Use a new checkpoint location for the new stream.");
    }
    List<ShardDescription> listed = lister.list();
    StreamOffset base = ShardLineage.reconcile(start, listed).withIdentity(identity);
    warnUnlisted(ShardLineage.unlisted(base, listed));
    List<String> readable = new ArrayList<>(ShardLineage.readableShards(base));
    Set<String> closed = new HashSet<>();
    listed.stream().filter(d -> d.closed).forEach(d -> closed.add(d.shardId));
    if (availableNow) {
      // A caught-up shard is done for this run, unless Kinesis has closed it: then it is read
      // once more to see its end, so that its children (which hold the newer records) are read.
      readable.removeIf(id -> caughtUp.contains(id) && !closed.contains(id));
    }
    Map<String, Integer> budgets = BatchBudget.allocate(readable, options.maxRecordsPerShard,
        maxRows(limit), batchCounter++);

    Map<String, Future<FetchResult>> futures = new LinkedHashMap<>();
    long deadline = System.currentTimeMillis() + options.maxFetchDurationMs;
    long bytesPerShard = options.maxBytesPerTrigger / Math.max(1, budgets.size());
    for (Map.Entry<String, Integer> e : budgets.entrySet()) {
      ShardPosition from = base.get(e.getKey()).orElseThrow();
      retentionGuard.beforeFirstRead(from, System.currentTimeMillis());
      futures.put(e.getKey(),
          fetchPool.submit(() -> fetch(from, e.getValue(), bytesPerShard, deadline,
              closed.contains(from.shardId))));
    }

    Map<String, FetchResult> results = new LinkedHashMap<>();
    for (Map.Entry<String, Future<FetchResult>> e : futures.entrySet()) {
      results.put(e.getKey(), await(e.getValue()));
    }
    long now = System.currentTimeMillis();
    StreamOffset end = base;
    for (Map.Entry<String, FetchResult> e : results.entrySet()) {
      FetchResult result = e.getValue();
      if (result.millisBehindLatest != null) {
        millisBehindLatest.put(e.getKey(), result.millisBehindLatest);
      }
      ShardPosition from = base.get(e.getKey()).orElseThrow();
      retentionGuard.afterRead(from, result.lagMillis(now));
      ShardPosition to = from;
      if (!result.records.isEmpty()) {
        to = to.consumedThrough(result.lastSequenceNumber(), result.lastArrivalMillis());
        cache.put(e.getKey(), from.nextReadStart(), result);
      }
      if (result.drained) {
        to = to.asDrained();
        LOG.info("Kinesis shard {} of {} is drained; its children become readable",
            e.getKey(), options.streamName);
      }
      if (availableNow && (result.caughtUp || result.drained)) {
        caughtUp.add(e.getKey());
      }
      end = end.with(to);
    }
    return new KinesisOffset(end);
  }

  /**
   * Shown in Spark's progress (sources[].metrics) and so in the job's status: how far behind the
   * newest record the slowest shard was at its last read. A growing value means the job does not
   * keep up; past the stream's retention, records would age out unread.
   */
  @Override
  public Map<String, String> metrics(Optional<Offset> latestConsumedOffset) {
    long max = millisBehindLatest.values().stream().mapToLong(Long::longValue).max().orElse(0L);
    return Map.of("maxMillisBehindLatest", Long.toString(max),
        "shardsWithLag",
        Long.toString(millisBehindLatest.values().stream().filter(v -> v > 0).count()));
  }

  private FetchResult fetch(ShardPosition from, int budget, long maxBytes, long deadline,
      boolean closed) {
    ShardCursor cursor = new ShardCursor(client, options, from.shardId, from.nextReadStart());
    return ShardFetch.fetch(cursor, budget, maxBytes, options.maxRecordsPerCall, deadline,
        System::currentTimeMillis, closed);
  }

  /** Once per shard while it stays unlisted: every batch would repeat it otherwise. */
  private void warnUnlisted(List<String> shardIds) {
    unlisted.retainAll(shardIds);
    for (String id : shardIds) {
      if (unlisted.add(id)) {
        LOG.warn("Kinesis shard {} of '{}' is not in the shard listing, but the query has not"
            + " read it to its end: its position is kept. If the shard is really gone, reading it"
            + " fails and names what to do.", id, options.streamName);
      }
    }
  }

  @Override
  public InputPartition[] planInputPartitions(Offset start, Offset end) {
    StreamOffset startState = state(start);
    List<InputPartition> partitions = new ArrayList<>();
    for (ShardPosition to : state(end).shards()) {
      if (to.lastSequenceNumber == null) {
        continue;
      }
      // A shard missing from the start offset is new in this batch: it starts at TRIM_HORIZON.
      ShardPosition from = startState.get(to.shardId)
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
        LOG.info("Kinesis shard {}: {} range ({}, {}] from the stream on the executor",
            to.shardId, cached == null ? "replaying" : "re-reading large", rangeStart,
            to.lastSequenceNumber);
      }
      partitions.add(new KinesisInputPartition(options, to.shardId, rangeStart,
          to.lastSequenceNumber, inline));
    }
    return partitions.toArray(new InputPartition[0]);
  }

  @Override
  public PartitionReaderFactory createReaderFactory() {
    return new KinesisPartitionReaderFactory();
  }

  @Override
  public void commit(Offset end) {
    cache.evictCommitted(state(end));
  }

  @Override
  public synchronized void stop() {
    cache.clear();
    if (fetchPool != null) {
      fetchPool.shutdownNow();
    }
    if (client != null) {
      client.shutdown();
    }
  }

  @Override
  public String toString() {
    return "KinesisSource[" + options.streamName + " @ " + options.endpointDescription() + "]";
  }

  private StreamOffset state(Offset offset) {
    return offset instanceof KinesisOffset
        ? ((KinesisOffset) offset).state
        : StreamOffset.fromJson(offset.json());
  }

  /** The row cap of a ReadLimit, if it has one (a composite limit's smallest row cap). */
  static OptionalLong maxRows(ReadLimit limit) {
    if (limit instanceof ReadMaxRows) {
      return OptionalLong.of(((ReadMaxRows) limit).maxRows());
    }
    if (limit instanceof CompositeReadLimit) {
      OptionalLong min = OptionalLong.empty();
      for (ReadLimit part : ((CompositeReadLimit) limit).getReadLimits()) {
        OptionalLong rows = maxRows(part);
        if (rows.isPresent() && (min.isEmpty() || rows.getAsLong() < min.getAsLong())) {
          min = rows;
        }
      }
      return min;
    }
    return OptionalLong.empty();
  }

  private static FetchResult await(Future<FetchResult> f) {
    try {
      return f.get();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("Interrupted while reading Kinesis", e);
    } catch (ExecutionException e) {
      Throwable cause = e.getCause();
      if (cause instanceof RuntimeException) {
        throw (RuntimeException) cause;
      }
      throw new IllegalStateException("Reading Kinesis failed", cause);
    }
  }
}
