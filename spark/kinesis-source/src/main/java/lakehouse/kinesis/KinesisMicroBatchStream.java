package lakehouse.kinesis;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
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
 * The driver side of the source: one {@link StreamReader} per stream, one offset for all of them
 * ({@link SourceOffset}).
 *
 * <p>A batch's end must be decided on the driver, once, so that a replay after a crash reads the
 * very same records. So latestOffset() reads every readable shard of every stream (in parallel,
 * bounded by the batch budget, which is shared by all the streams' shards) and returns the last
 * sequence number read per shard. The records read are cached and handed to the shard's input
 * partition by planInputPartitions(); on a cache miss (a replay after restart) the partition
 * re-reads exactly (start, end] from Kinesis on the executor. commit() frees the cache. While a
 * batch with a backlog behind it is written, the next one is read ahead ({@link ReadAhead}).
 *
 * <p>The streams may change between runs of a query: a stream added to the list is read from its
 * trim horizon; one left out is no longer read, and its position stays in the offset so that
 * adding it back resumes there. A stream that does not exist is reported and skipped while the
 * others are read; the query fails only when none of its streams exists.
 */
final class KinesisMicroBatchStream
    implements MicroBatchStream, SupportsTriggerAvailableNow, ReportsSourceMetrics {
  private static final Logger LOG = LoggerFactory.getLogger(KinesisMicroBatchStream.class);

  private final KinesisOptions options;
  private final String checkpointLocation;
  private final Map<String, StreamReader> readers = new LinkedHashMap<>();
  /** Streams in the checkpoint that the query no longer reads (warned once each). */
  private final Set<String> leftOut = ConcurrentHashMap.newKeySet();
  /** Runs the reads of batches' records, and reads the next batch ahead ({@link ReadAhead}). */
  private final ReadAhead reading = new ReadAhead();
  private long batchCounter; // used on the reading thread only
  private volatile boolean availableNow;

  KinesisMicroBatchStream(KinesisOptions options, String checkpointLocation) {
    this.options = options;
    this.checkpointLocation = checkpointLocation;
    for (String name : options.streamNames) {
      readers.put(name, new StreamReader(options.forStream(name)));
    }
  }

  @Override
  public Offset initialOffset() {
    InitialOffsetStore store = new InitialOffsetStore(checkpointLocation,
        SparkSession.active().sparkContext().hadoopConfiguration());
    // Whole seconds: what GetShardIterator(AT_TIMESTAMP) can be given (ShardCursor). LATEST so
    // includes records from the start of the second the query starts in.
    long startSecond = Math.floorDiv(System.currentTimeMillis(), 1000L) * 1000L;
    return new KinesisOffset(store.loadOrCreate(() -> {
      Map<String, StreamOffset> streams = new LinkedHashMap<>();
      for (StreamReader reader : readers.values()) {
        reader.initial(options.startingPosition, startSecond)
            .ifPresent(offset -> streams.put(reader.name, offset));
      }
      if (streams.isEmpty()) {
        throw noStreamExists();
      }
      return new SourceOffset(streams);
    }));
  }

  @Override
  public Offset deserializeOffset(String json) {
    return new KinesisOffset(SourceOffset.fromJson(json));
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
    readers.values().forEach(StreamReader::prepareForTriggerAvailableNow);
  }

  @Override
  public Offset latestOffset() {
    throw new UnsupportedOperationException(
        "latestOffset(Offset, ReadLimit) should be called instead of this method");
  }

  @Override
  public Offset latestOffset(Offset startOffset, ReadLimit limit) {
    SourceOffset start = state(startOffset);
    if (ReadGate.isClosed()) {
      reading.drop();
      LOG.info("the job is stopping: no records for a new micro-batch");
      return new KinesisOffset(start);
    }
    warnLeftOut(start);
    OptionalLong rows = maxRows(limit);
    ReadAhead.Batch batch = reading.read(start, rows, () -> readBatch(start, rows));
    if (availableNow) {
      batch.results.forEach((name, results) -> readers.get(name).noteCaughtUp(results));
    }
    if (options.readAhead && batch.behind()) {
      reading.readAhead(batch.end, rows, () -> readBatch(batch.end, rows));
    }
    return new KinesisOffset(batch.end);
  }

  /** Reads the batch that starts at {@code start}: every readable shard, within the budgets. */
  private ReadAhead.Batch readBatch(SourceOffset start, OptionalLong rows) {
    Map<String, StreamReader.Plan> plans = new LinkedHashMap<>();
    for (StreamReader reader : readers.values()) {
      reader.plan(start.get(reader.name), availableNow)
          .ifPresent(plan -> plans.put(reader.name, plan));
    }
    if (plans.isEmpty()) {
      throw noStreamExists();
    }
    // One budget over every stream's readable shards, keyed stream/shard (a stream name has no /).
    List<String> keys = new ArrayList<>();
    plans.forEach((name, plan) -> plan.readable.forEach(shard -> keys.add(name + "/" + shard)));
    Map<String, Integer> budgets = BatchBudget.allocate(keys, options.maxRecordsPerShard,
        rows, batchCounter++);
    long deadline = System.currentTimeMillis() + options.maxFetchDurationMs;
    long bytesPerShard = options.maxBytesPerTrigger / Math.max(1, budgets.size());

    Map<String, Map<String, Future<FetchResult>>> futures = new LinkedHashMap<>();
    for (Map.Entry<String, StreamReader.Plan> e : plans.entrySet()) {
      Map<String, Integer> own = new LinkedHashMap<>();
      budgets.forEach((key, budget) -> {
        if (key.startsWith(e.getKey() + "/")) {
          own.put(key.substring(e.getKey().length() + 1), budget);
        }
      });
      futures.put(e.getKey(),
          readers.get(e.getKey()).fetch(e.getValue(), own, bytesPerShard, deadline));
    }
    SourceOffset end = start;
    Map<String, Map<String, FetchResult>> all = new LinkedHashMap<>();
    for (Map.Entry<String, Map<String, Future<FetchResult>>> e : futures.entrySet()) {
      Map<String, FetchResult> results = new LinkedHashMap<>();
      e.getValue().forEach((shard, future) -> results.put(shard, Futures.await(future)));
      end = end.with(readers.get(e.getKey()).end(plans.get(e.getKey()), results));
      all.put(e.getKey(), results);
    }
    return new ReadAhead.Batch(end, all);
  }

  /**
   * Shown in Spark's progress (sources[].metrics) and so in the job's status and metrics: how far
   * behind the newest record the slowest shard of any stream was at its last read, how many shards
   * are behind, and each shard's figure (what Kinesis reports to CloudWatch as
   * GetRecords.MillisBehindLatest per shard). A growing value means the job does not keep up;
   * past the stream's retention, records would age out unread.
   */
  @Override
  public Map<String, String> metrics(Optional<Offset> latestConsumedOffset) {
    Map<String, Map<String, Long>> lags = new TreeMap<>();
    List<String> missing = new ArrayList<>();
    for (StreamReader reader : readers.values()) {
      lags.put(reader.name, new TreeMap<>(reader.millisBehindLatest()));
      if (reader.missing()) {
        missing.add(reader.name);
      }
    }
    return lagMetrics(lags, missing);
  }

  /** metrics' values from each stream's lag per shard (ms) and the streams that do not exist. */
  static Map<String, String> lagMetrics(
      Map<String, Map<String, Long>> lags, List<String> missing) {
    long max = 0;
    long behind = 0;
    StringBuilder byShard = new StringBuilder("{");
    for (Map.Entry<String, Map<String, Long>> stream : lags.entrySet()) {
      byShard.append(byShard.length() > 1 ? "," : "").append(quoted(stream.getKey())).append(":{");
      String separator = "";
      for (Map.Entry<String, Long> shard : stream.getValue().entrySet()) {
        max = Math.max(max, shard.getValue());
        behind += shard.getValue() > 0 ? 1 : 0;
        byShard.append(separator).append(quoted(shard.getKey())).append(':')
            .append(shard.getValue());
        separator = ",";
      }
      byShard.append('}');
    }
    return Map.of("maxMillisBehindLatest", Long.toString(max),
        "shardsWithLag", Long.toString(behind),
        "millisBehindLatestByShard", byShard.append('}').toString(),
        "missingStreams", String.join(",", missing));
  }

  // Stream names ([a-zA-Z0-9_.-]) and shard ids need no escaping; a quote or backslash would.
  private static String quoted(String name) {
    return '"' + name.replace("\\", "\\\\").replace("\"", "\\\"") + '"';
  }

  @Override
  public InputPartition[] planInputPartitions(Offset start, Offset end) {
    SourceOffset startState = state(start);
    List<InputPartition> partitions = new ArrayList<>();
    for (StreamOffset to : state(end).streams().values()) {
      StreamReader reader = readers.get(to.streamName);
      if (reader == null) {
        // Left out of the query since this batch was planned: the batch's replay still reads
        // its range (from the stream, on the executors), or those records would be skipped.
        reader = new StreamReader(options.forStream(to.streamName));
      }
      partitions.addAll(reader.partitions(startState.get(to.streamName), to));
    }
    return partitions.toArray(new InputPartition[0]);
  }

  @Override
  public PartitionReaderFactory createReaderFactory() {
    return new KinesisPartitionReaderFactory();
  }

  @Override
  public void commit(Offset end) {
    for (StreamOffset stream : state(end).streams().values()) {
      StreamReader reader = readers.get(stream.streamName);
      if (reader != null) {
        reader.commit(stream);
      }
    }
  }

  @Override
  public synchronized void stop() {
    reading.stop();
    readers.values().forEach(StreamReader::stop);
  }

  @Override
  public String toString() {
    return "KinesisSource[" + String.join(",", options.streamNames) + " @ "
        + options.endpointDescription() + "]";
  }

  private IllegalArgumentException noStreamExists() {
    return new IllegalArgumentException((options.streamNames.size() == 1
        ? "Kinesis stream '" + options.streamNames.get(0) + "' does not exist"
        : "None of the Kinesis streams " + options.streamNames + " exists")
        + " at " + options.endpointDescription() + ": create it, or check the name"
        + " (option streamName).");
  }

  /** Once per stream while the checkpoint holds it and the query does not read it. */
  private void warnLeftOut(SourceOffset start) {
    for (String name : start.streams().keySet()) {
      if (!readers.containsKey(name) && leftOut.add(name)) {
        LOG.warn("Kinesis stream '{}' is in the checkpoint {} but not in this query's streams {}:"
            + " it is not read. Its position is kept, so adding it back resumes where it stopped.",
            name, checkpointLocation, options.streamNames);
      }
    }
  }

  private SourceOffset state(Offset offset) {
    return offset instanceof KinesisOffset
        ? ((KinesisOffset) offset).state
        : SourceOffset.fromJson(offset.json());
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
}
