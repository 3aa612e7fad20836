package lakehouse.cdc;

import com.amazonaws.ClientConfiguration;
import com.amazonaws.SDKGlobalConfiguration;
import com.amazonaws.auth.AWSStaticCredentialsProvider;
import com.amazonaws.auth.BasicAWSCredentials;
import com.amazonaws.client.builder.AwsClientBuilder.EndpointConfiguration;
import com.amazonaws.services.kinesis.AmazonKinesis;
import com.amazonaws.services.kinesis.AmazonKinesisClientBuilder;
import com.amazonaws.services.kinesis.model.ResourceInUseException;
import com.amazonaws.services.kinesis.model.ResourceNotFoundException;
import com.sun.net.httpserver.HttpServer;
import io.debezium.engine.ChangeEvent;
import io.debezium.engine.DebeziumEngine;
import io.debezium.engine.format.Json;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import javax.management.JMException;
import javax.management.MBeanServer;
import javax.management.ObjectName;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The CDC service: Debezium's embedded engine with its PostgreSQL connector, writing each
 * captured table's change events to a Kinesis stream of its own (KinesisSink), with the
 * connector's offsets in a file that a restart resumes from. Configured by the environment
 * (services/cdc/cdc.env through lakehouse.services); {@code GET /health} on CDC_HEALTH_PORT
 * answers 200 once the connector's task runs and 503 before or after.
 */
public final class CdcService {
  private static final Logger LOG = LoggerFactory.getLogger(CdcService.class);

  private CdcService() {}

  static String env(Map<String, String> env, String key) {
    String value = env.get(key);
    if (value == null || value.isBlank()) {
      throw new IllegalArgumentException(
          key + " is not set: the CDC service reads its settings from services/cdc/cdc.env "
              + "(lakehouse up --cdc passes them)");
    }
    return value;
  }

  /** The engine's properties: the connector, its database and the offset store. */
  static Properties engineProperties(Map<String, String> env) {
    Properties p = new Properties();
    p.setProperty("name", "lakehouse-cdc");
    p.setProperty("connector.class", "io.debezium.connector.postgresql.PostgresConnector");
    p.setProperty("database.hostname", env(env, "CDC_PG_HOST"));
    p.setProperty("database.port", env(env, "CDC_PG_PORT"));
    p.setProperty("database.user", env(env, "CDC_PG_USER"));
    p.setProperty("database.password", env(env, "CDC_PG_PASSWORD"));
    p.setProperty("database.dbname", env(env, "CDC_PG_DATABASE"));
    p.setProperty("topic.prefix", env(env, "CDC_TOPIC_PREFIX"));
    p.setProperty("table.include.list", env(env, "CDC_TABLES"));
    p.setProperty("plugin.name", "pgoutput");
    p.setProperty("slot.name", env(env, "CDC_SLOT"));
    p.setProperty("publication.name", env(env, "CDC_SLOT"));
    p.setProperty("publication.autocreate.mode", "filtered");
    p.setProperty("snapshot.mode", env.getOrDefault("CDC_SNAPSHOT_MODE", "initial"));
    // numeric as its exact text ("19.99"), which a decimal(p,s) field of the tables file
    // reads without rounding (the default is a base64 BigDecimal; double would round).
    p.setProperty("decimal.handling.mode", "string");
    // date, timestamp and time as the ISO text the job's record rules read (the defaults
    // are numbers: days and micros since the epoch).
    p.setProperty("converters", "temporal");
    p.setProperty("temporal.type", TemporalConverter.class.getName());
    // Kinesis has no log compaction: a tombstone would only be a record to skip.
    p.setProperty("tombstones.on.delete", "false");
    // Debezium's default, named here because the job quarantines rows that carry it
    // (lakehouse_tables.rules.DEBEZIUM_UNAVAILABLE_PLACEHOLDER).
    p.setProperty("unavailable.value.placeholder", "__debezium_unavailable_value");
    // The events as the job reads them: no embedded schema (it reads both forms).
    p.setProperty("converter.schemas.enable", "false");
    p.setProperty("key.converter.schemas.enable", "false");
    p.setProperty("value.converter.schemas.enable", "false");
    p.setProperty("offset.storage", "org.apache.kafka.connect.storage.FileOffsetBackingStore");
    p.setProperty("offset.storage.file.filename", env(env, "CDC_OFFSETS_FILE"));
    // Offsets cover processed (acknowledged) events only, stored after every batch: a crash
    // replays at most the batch in flight, and the window in which changes are in Kinesis
    // but no offset is stored at all (see SnapshotMark) is that one batch.
    p.setProperty("offset.flush.interval.ms", "0");
    // Heartbeats let the offsets (and the replication slot's confirmed position) move on
    // when the captured tables are quiet: without them a snapshot of empty tables stores
    // no offset (the next start snapshots again) and the slot holds the WAL of every
    // other table's changes. KinesisSink writes heartbeats nowhere.
    p.setProperty("heartbeat.interval.ms", env.getOrDefault("CDC_HEARTBEAT_MS", "5000"));
    p.setProperty("heartbeat.topics.prefix", KinesisSink.HEARTBEAT_PREFIX);
    p.setProperty("errors.max.retries", "-1");
    // Events per batch handed to KinesisSink (Debezium's default 2048).
    p.setProperty("max.batch.size", env.getOrDefault("CDC_MAX_BATCH_SIZE", "2048"));
    // Notifications come to KinesisSink in order with the change events: an incremental
    // snapshot's "table scan completed" tells it that table's rows are all delivered.
    p.setProperty("notification.enabled.channels", "sink");
    p.setProperty("notification.sink.topic.name", KinesisSink.NOTIFICATION_TOPIC);
    return p;
  }

  /** The signal table Debezium reads execute-snapshot rows from (schema.table), or null. */
  static String signalTable(Map<String, String> env) {
    String table = env.getOrDefault("CDC_SIGNAL_TABLE", "").trim();
    return table.isEmpty() ? null : table;
  }

  /** The captured tables (CDC_TABLES), as schema.table. */
  static List<String> includedTables(Properties props) {
    List<String> tables = new ArrayList<>();
    for (String table : props.getProperty("table.include.list").split(",")) {
      if (!table.isBlank()) {
        tables.add(table.trim());
      }
    }
    return tables;
  }

  static AmazonKinesis kinesis(Map<String, String> env) {
    // Kinesis emulators speak JSON only; the SDK would otherwise use CBOR.
    System.setProperty(SDKGlobalConfiguration.AWS_CBOR_DISABLE_SYSTEM_PROPERTY, "true");
    return AmazonKinesisClientBuilder.standard()
        .withClientConfiguration(new ClientConfiguration().withMaxErrorRetry(3))
        .withEndpointConfiguration(
            new EndpointConfiguration(env(env, "KINESIS_ENDPOINT"), env(env, "AWS_REGION")))
        .withCredentials(
            new AWSStaticCredentialsProvider(
                new BasicAWSCredentials(
                    env.getOrDefault("AWS_ACCESS_KEY_ID", "test"),
                    env.getOrDefault("AWS_SECRET_ACCESS_KEY", "test"))))
        .build();
  }

  /** Creates a table's stream (at start, or on an event of a table not known then) and
   * waits until it is ACTIVE. */
  static final class Streams {
    private final AmazonKinesis kinesis;
    private final int shards;
    private final Set<String> known = ConcurrentHashMap.newKeySet();

    Streams(AmazonKinesis kinesis, int shards) {
      this.kinesis = kinesis;
      this.shards = shards;
    }

    void ensure(String stream) {
      if (known.contains(stream)) {
        return;
      }
      try {
        kinesis.createStream(stream, shards);
        LOG.info("created stream {} ({} shards)", stream, shards);
      } catch (ResourceInUseException exists) {
        // made by an earlier run or by hand
      }
      for (int i = 0; i < 600; i++) {
        try {
          String status =
              kinesis.describeStreamSummary(
                      new com.amazonaws.services.kinesis.model.DescribeStreamSummaryRequest()
                          .withStreamName(stream))
                  .getStreamDescriptionSummary()
                  .getStreamStatus();
          if ("ACTIVE".equals(status) || "UPDATING".equals(status)) {
            known.add(stream);
            return;
          }
        } catch (ResourceNotFoundException notYet) {
          // just created
        }
        try {
          Thread.sleep(100);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new IllegalStateException("interrupted while waiting for stream " + stream, e);
        }
      }
      throw new IllegalStateException("stream " + stream + " did not become ACTIVE in 60 s");
    }
  }

  /** The stream of each captured table: {@code <topic.prefix>.<schema>.<table>}. */
  static Set<String> capturedStreams(Properties props) {
    Set<String> streams = new LinkedHashSet<>();
    for (String table : props.getProperty("table.include.list").split(",")) {
      streams.add(props.getProperty("topic.prefix") + "." + table.trim());
    }
    return streams;
  }

  public static void main(String[] args) throws Exception {
    Map<String, String> env = System.getenv();
    Properties props = engineProperties(env);
    Path offsets = Path.of(props.getProperty("offset.storage.file.filename"));
    Files.createDirectories(offsets.toAbsolutePath().getParent());
    try {
      run(env, props, offsets);
    } catch (ResumeCheck.CannotResume error) {
      // Said once, in words, without a stack trace: the user acts on it (cdc reset).
      LOG.error(error.getMessage());
      writeError(props, offsets, error);
      System.exit(ResumeCheck.CannotResume.EXIT_CODE);
    }
  }

  private static void writeError(Properties props, Path offsets, ResumeCheck.CannotResume error) {
    try {
      ResumeCheck.writeError(
          offsets,
          error,
          props.getProperty("database.dbname"),
          where(props),
          props.getProperty("slot.name"),
          ResumeCheck.storedLsn(offsets));
    } catch (IOException e) {
      LOG.warn("cannot write {} beside {}: {}", ResumeCheck.ERROR_FILE, offsets, e.toString());
    }
  }

  static String where(Properties props) {
    return props.getProperty("database.hostname") + ":" + props.getProperty("database.port");
  }

  private static void run(Map<String, String> env, Properties props, Path offsets)
      throws Exception {
    AmazonKinesis kinesis = kinesis(env);
    Streams streams = new Streams(kinesis, Integer.parseInt(env.getOrDefault("CDC_STREAM_SHARDS", "2")));
    SnapshotMark mark = SnapshotMark.besideOffsets(offsets);
    CaptureState capture = CaptureState.besideOffsets(offsets);
    boolean hadOffsets = SnapshotMark.hasStoredOffsets(offsets);
    if (hadOffsets) {
      checkResumable(props, offsets);
    } else if (!capture.initialSnapshot()) {
      // After `lakehouse cdc reset`: stream from a new slot at once; every table comes by
      // an incremental snapshot, which deletes the rows the lake holds and the database
      // no longer has (an initial snapshot would leave them).
      props.setProperty("snapshot.mode", "no_data");
    }
    resumeFromSlotIfDelivered(props, mark, offsets);
    String mode = props.getProperty("snapshot.mode");
    boolean initialSnapshotRuns =
        !hadOffsets && ("initial".equals(mode) || "when_needed".equals(mode) || "always".equals(mode));
    List<String> include = includedTables(props);
    if (!capture.existed() && !initialSnapshotRuns) {
      LOG.info(
          "no record of which tables' rows were delivered ({}): taking the captured tables {} "
              + "as delivered (the stored offsets cover them)",
          capture.file(),
          include);
      capture.assumeCaptured(include);
    }
    CaptureState.Plan plan = capture.plan(include, initialSnapshotRuns);
    for (String table : plan.removed()) {
      LOG.warn(
          "{} is no longer captured (not in CDC_TABLES): its stream {} gets no more changes and "
              + "the lake keeps its rows as they are. Added back, it is snapshotted again and "
              + "the rows deleted meanwhile are deleted in the lake.",
          table,
          props.getProperty("topic.prefix") + "." + table);
    }
    String signalTable = signalTable(env);
    if (!capture.pending().isEmpty()) {
      checkSignalTable(props, signalTable);
    }
    if (signalTable != null && signalTableExists(props, signalTable)) {
      props.setProperty("signal.data.collection", signalTable);
      props.setProperty("signal.enabled.channels", "source");
    }
    IncrementalKeys incremental =
        new IncrementalKeys(
            offsets.toAbsolutePath().getParent(),
            props.getProperty("topic.prefix"),
            (stream, record) -> readStream(kinesis, stream, record));
    for (String table : plan.added()) {
      incremental.forget(table);
    }
    for (String table : plan.removed()) {
      incremental.forget(table);
    }
    Long serverLsn = capture.pending().isEmpty() ? null : currentLsn(props);
    long lakeNewest = Long.MIN_VALUE;
    String newestTable = null;
    for (String table : capture.pending()) {
      LOG.info(
          "{} has no snapshot in the lake (added to CDC_TABLES since, or the capture was "
              + "reset): an incremental snapshot reads its existing rows while every table streams",
          table);
      long newest = incremental.begin(table);
      if (newest > lakeNewest) {
        lakeNewest = newest;
        newestTable = table;
      }
    }
    if (serverLsn != null && lakeNewest >= serverLsn + capture.lsnShift()) {
      if (!hadOffsets && !capture.initialSnapshot()) {
        // A reset onto a server behind the lake (a new cluster, a restore from a backup):
        // the lake orders a row's changes by log position, so every position this server
        // writes is shifted past the lake's newest, once, for the life of this capture.
        long shift = lakeNewest - serverLsn + 1;
        LOG.warn(
            "the lake holds changes up to log position {} ({}), past database '{}' on {} (now "
                + "at {}): another server answers at that address (a new cluster, or a restore). "
                + "Every position it writes is shifted by {} (source.lsn_shift in each event) "
                + "so that its rows replace the lake's.",
            ResumeCheck.lsnText(lakeNewest),
            newestTable,
            props.getProperty("database.dbname"),
            where(props),
            ResumeCheck.lsnText(serverLsn),
            shift);
        capture.lsnShift(shift);
      } else {
        throw new ResumeCheck.CannotResume(
            "server_behind_lake",
            "cannot snapshot " + newestTable + " into the lake: its stream holds changes at log "
                + "position " + ResumeCheck.lsnText(lakeNewest) + ", past database '"
                + props.getProperty("database.dbname") + "' on " + where(props) + " (now at "
                + ResumeCheck.lsnText(serverLsn + capture.lsnShift()) + "): another server "
                + "answers at that address (a new cluster, or a restore). To start the capture "
                + "over on it: `lakehouse cdc reset`.");
      }
    }
    KinesisSink sink =
        new KinesisSink(
                kinesis,
                streams::ensure,
                Thread::sleep,
                mark,
                SnapshotKeys.besideOffsets(offsets, capturedStreams(props)),
                KinesisSink.STOP_GRACE_MS)
            .capture(
                capture,
                incremental,
                initialSnapshotRuns ? include : List.of(),
                signalTable == null ? null : props.getProperty("topic.prefix") + "." + signalTable,
                ResumeCheck.storedLsn(offsets),
                capture.lsnShift());
    // Every captured table's stream exists before the first change: a job started now
    // reads them all (a job's list of streams is fixed by its checkpoint).
    capturedStreams(props).forEach(streams::ensure);
    ResumeCheck.clearError(offsets);

    AtomicReference<String> state = new AtomicReference<>("starting");
    AtomicReference<Throwable> failure = new AtomicReference<>();
    java.util.concurrent.atomic.AtomicBoolean positionGone = new java.util.concurrent.atomic.AtomicBoolean();
    CountDownLatch done = new CountDownLatch(1);
    DebeziumEngine<ChangeEvent<String, String>> engine =
        DebeziumEngine.create(Json.class)
            .using(props)
            .using(
                new DebeziumEngine.ConnectorCallback() {
                  @Override
                  public void taskStarted() {
                    state.set("running");
                    LOG.info("connector task started: capturing {}", props.getProperty("table.include.list"));
                  }

                  @Override
                  public void taskStopped() {
                    state.set("stopped");
                  }
                })
            .using(
                (success, message, error) -> {
                  if (!success && ResumeCheck.positionGone(error, message)) {
                    positionGone.set(true);
                  }
                  if (!success) {
                    failure.set(error != null ? error : new IllegalStateException(message));
                    LOG.error("the Debezium engine stopped: {}", message, error);
                  } else {
                    LOG.info("the Debezium engine stopped: {}", message);
                  }
                  state.set("stopped");
                  done.countDown();
                })
            .notifying(HaltInSnapshot.wrap(sink, env))
            .build();

    HttpServer health = healthServer(env, state, sink, props.getProperty("topic.prefix"), capture);
    ExecutorService executor = Executors.newSingleThreadExecutor();
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  LOG.info("stopping: the batch in flight is finished and offsets flushed");
                  try {
                    engine.close();
                    done.await(30, TimeUnit.SECONDS);
                  } catch (IOException | InterruptedException e) {
                    LOG.warn("stopping the engine: {}", e.toString());
                  }
                  health.stop(0);
                },
                "cdc-shutdown"));
    executor.execute(engine);
    Thread signaller =
        new Thread(() -> sendSignals(props, capture, signalTable, state), "cdc-signals");
    signaller.setDaemon(true);
    signaller.start();
    done.await();
    executor.shutdown();
    health.stop(0);
    if (positionGone.get()) {
      // Debezium found it first (the slot went away while the service ran).
      Long stored = ResumeCheck.storedLsn(offsets);
      ResumeCheck.CannotResume error =
          ResumeCheck.problem(
              props.getProperty("database.dbname"),
              where(props),
              slot(props),
              stored == null ? 0 : stored,
              offsets);
      throw error != null
          ? error
          : new ResumeCheck.CannotResume(
              "position_gone",
              "the CDC capture cannot resume: Debezium says the stored log position "
                  + (stored == null ? "" : ResumeCheck.lsnText(stored) + " ")
                  + "is no longer available from replication slot '"
                  + props.getProperty("slot.name") + "' in database '"
                  + props.getProperty("database.dbname") + "' on " + where(props) + ". To "
                  + "start the capture over: `lakehouse cdc reset`.");
    }
    if (failure.get() != null) {
      System.exit(1);
    }
  }

  /** Refused, in words, when the stored position cannot be read from the server any more. */
  static void checkResumable(Properties props, Path offsets)
      throws IOException, ResumeCheck.CannotResume {
    Long[] positions = ResumeCheck.storedPositions(offsets);
    if (positions == null) {
      return;
    }
    boolean processed = positions[0] != null;
    long stored = processed ? positions[0] : positions[1];
    ResumeCheck.Slot slot;
    try {
      slot = slot(props);
    } catch (IllegalStateException unreachable) {
      return; // Debezium retries the connection and says why it cannot connect
    }
    ResumeCheck.CannotResume problem =
        ResumeCheck.problem(
            props.getProperty("database.dbname"), where(props), slot, stored, processed, offsets);
    if (problem != null) {
      throw problem;
    }
  }

  static Connection connect(Properties props) throws SQLException {
    String url =
        "jdbc:postgresql://" + where(props) + "/" + props.getProperty("database.dbname");
    return DriverManager.getConnection(
        url, props.getProperty("database.user"), props.getProperty("database.password"));
  }

  /** The replication slot as the server has it (a missing database counts as no slot). */
  static ResumeCheck.Slot slot(Properties props) throws ResumeCheck.CannotResume {
    String name = props.getProperty("slot.name");
    try (Connection conn = connect(props);
        PreparedStatement query =
            conn.prepareStatement(
                "SELECT restart_lsn - '0/0'::pg_lsn, database FROM pg_replication_slots "
                    + "WHERE slot_name = ?")) {
      query.setString(1, name);
      try (ResultSet found = query.executeQuery()) {
        if (!found.next()) {
          return new ResumeCheck.Slot(name, false, null, null);
        }
        long restart = found.getLong(1);
        return new ResumeCheck.Slot(name, true, found.wasNull() ? null : restart, found.getString(2));
      }
    } catch (SQLException e) {
      if ("3D000".equals(e.getSQLState())) {
        throw new ResumeCheck.CannotResume(
            "database_missing",
            "the CDC capture cannot resume: database '" + props.getProperty("database.dbname")
                + "' does not exist on " + where(props) + " (" + e.getMessage() + "). Create "
                + "it (or fix CDC_PG_DATABASE), then run `lakehouse cdc reset` to start the "
                + "capture over with a new replication slot and snapshot.");
      }
      throw new IllegalStateException(e);
    }
  }

  /** The server's current log position; null when it cannot be asked (Debezium says why). */
  static Long currentLsn(Properties props) {
    try (Connection conn = connect(props);
        PreparedStatement query = conn.prepareStatement("SELECT pg_current_wal_lsn() - '0/0'::pg_lsn");
        ResultSet found = query.executeQuery()) {
      return found.next() ? found.getLong(1) : null;
    } catch (SQLException e) {
      return null;
    }
  }

  static boolean signalTableExists(Properties props, String table) {
    try (Connection conn = connect(props);
        PreparedStatement query = conn.prepareStatement("SELECT to_regclass(?) IS NOT NULL")) {
      query.setString(1, table);
      try (ResultSet found = query.executeQuery()) {
        return found.next() && found.getBoolean(1);
      }
    } catch (SQLException e) {
      return false;
    }
  }

  /**
   * A table added to the capture needs the signal table (Debezium reads the execute-snapshot
   * row from the log, and writes its snapshot windows into it): refused, saying what to
   * create, when it is not set, missing, or not writable by the capture's user.
   */
  static void checkSignalTable(Properties props, String table) throws ResumeCheck.CannotResume {
    String create =
        "CREATE TABLE " + (table == null ? "public.debezium_signal" : table)
            + " (id varchar(64) PRIMARY KEY, type varchar(32) NOT NULL, data varchar(2048)); "
            + "GRANT SELECT, INSERT, UPDATE, DELETE ON it TO " + props.getProperty("database.user")
            + "; and, if you made the publication '" + props.getProperty("publication.name")
            + "' yourself, ALTER PUBLICATION ... ADD TABLE it";
    if (table == null) {
      throw new ResumeCheck.CannotResume(
          "signal_table_unset",
          "tables were added to CDC_TABLES but CDC_SIGNAL_TABLE is not set: their existing rows "
              + "are read by an incremental snapshot, which Debezium is asked for through a "
              + "signal table. Set CDC_SIGNAL_TABLE (services/cdc/cdc.env) and create it: " + create);
    }
    String problem = null;
    try (Connection conn = connect(props);
        PreparedStatement query =
            conn.prepareStatement(
                "SELECT to_regclass(?) IS NOT NULL, "
                    + "CASE WHEN to_regclass(?) IS NULL THEN false "
                    + "ELSE has_table_privilege(to_regclass(?), 'INSERT') END")) {
      query.setString(1, table);
      query.setString(2, table);
      query.setString(3, table);
      try (ResultSet found = query.executeQuery()) {
        found.next();
        if (!found.getBoolean(1)) {
          problem = "does not exist";
        } else if (!found.getBoolean(2)) {
          problem = "is not writable by user '" + props.getProperty("database.user") + "'";
        }
      }
    } catch (SQLException e) {
      return; // the database cannot be asked: Debezium says why
    }
    if (problem != null) {
      throw new ResumeCheck.CannotResume(
          "signal_table_missing",
          "tables were added to CDC_TABLES, whose existing rows are read by an incremental "
              + "snapshot that Debezium is asked for through the signal table " + table
              + " (CDC_SIGNAL_TABLE), which " + problem + " in database '"
              + props.getProperty("database.dbname") + "' on " + where(props) + ". With "
              + "CDC_POSTGRES=local the stack creates it; on your own database: " + create);
    }
  }

  /**
   * Once the connector streams, an execute-snapshot signal for the tables waiting for their
   * rows (inserted into the signal table, read by Debezium from the log in order with the
   * changes), then recorded as sent. Retried until it goes through or the service stops.
   */
  static void sendSignals(
      Properties props, CaptureState capture, String signalTable, AtomicReference<String> state) {
    if (signalTable == null) {
      return;
    }
    long backoff = 1_000;
    while (!"stopped".equals(state.get())) {
      List<String> tables = capture.unsignalled();
      if (tables.isEmpty()) {
        return;
      }
      try {
        if (streaming(props.getProperty("topic.prefix"))) {
          String id = java.util.UUID.randomUUID().toString();
          String data =
              "{\"data-collections\": ["
                  + String.join(", ", tables.stream().map(t -> "\"" + t + "\"").toList())
                  + "], \"type\": \"incremental\"}";
          try (Connection conn = connect(props);
              PreparedStatement insert =
                  conn.prepareStatement(
                      "INSERT INTO " + signalTable + " (id, type, data) VALUES (?, 'execute-snapshot', ?)")) {
            insert.setString(1, id);
            insert.setString(2, data);
            insert.executeUpdate();
          }
          capture.signalled(tables, id);
          LOG.info("asked Debezium for an incremental snapshot of {} (signal {})", tables, id);
          continue;
        }
        Thread.sleep(500);
      } catch (InterruptedException e) {
        return;
      } catch (SQLException | IOException e) {
        LOG.warn(
            "cannot send the execute-snapshot signal for {} through {}: {}; retrying in {} ms",
            tables,
            signalTable,
            e.toString(),
            backoff);
        try {
          Thread.sleep(backoff);
        } catch (InterruptedException stop) {
          return;
        }
        backoff = Math.min(backoff * 2, 30_000);
      }
    }
  }

  /** Every record of a stream from its trim horizon, shard by shard (parents first). */
  static void readStream(
      AmazonKinesis kinesis, String stream, java.util.function.BiConsumer<String, String> record)
      throws IOException {
    List<com.amazonaws.services.kinesis.model.Shard> shards = new ArrayList<>();
    try {
      String token = null;
      do {
        com.amazonaws.services.kinesis.model.ListShardsRequest request =
            new com.amazonaws.services.kinesis.model.ListShardsRequest();
        if (token == null) {
          request.setStreamName(stream);
        } else {
          request.setNextToken(token);
        }
        com.amazonaws.services.kinesis.model.ListShardsResult listed = kinesis.listShards(request);
        shards.addAll(listed.getShards());
        token = listed.getNextToken();
      } while (token != null);
    } catch (ResourceNotFoundException none) {
      return; // a table never captured before: nothing in the lake to reconcile
    }
    for (com.amazonaws.services.kinesis.model.Shard shard : shards) {
      String iterator =
          kinesis
              .getShardIterator(stream, shard.getShardId(), "TRIM_HORIZON")
              .getShardIterator();
      int emptyBehind = 0;
      while (iterator != null) {
        com.amazonaws.services.kinesis.model.GetRecordsResult page;
        try {
          page =
              kinesis.getRecords(
                  new com.amazonaws.services.kinesis.model.GetRecordsRequest()
                      .withShardIterator(iterator)
                      .withLimit(10_000));
        } catch (com.amazonaws.services.kinesis.model.ProvisionedThroughputExceededException slow) {
          try {
            Thread.sleep(1_000);
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while reading stream " + stream, e);
          }
          continue;
        }
        for (com.amazonaws.services.kinesis.model.Record r : page.getRecords()) {
          record.accept(r.getPartitionKey(), StandardCharsets.UTF_8.decode(r.getData()).toString());
        }
        Long behind = page.getMillisBehindLatest();
        if (page.getRecords().isEmpty() && (behind == null || behind == 0)) {
          break;
        }
        // Empty pages while behind: Kinesis walking past a gap; bounded, never cut short.
        emptyBehind = page.getRecords().isEmpty() ? emptyBehind + 1 : 0;
        if (emptyBehind > 1_000) {
          throw new IOException(
              "stream " + stream + " shard " + shard.getShardId() + " kept answering empty "
                  + "pages " + behind + " ms behind its tip: its keys cannot be read to the "
                  + "end, so the rows it holds that the database no longer has are unknown");
        }
        iterator = page.getNextShardIterator();
      }
    }
  }

  /**
   * Without stored offsets: with changes delivered before (the mark), stream from the slot
   * instead of snapshotting again (SnapshotMark says why), refused when the slot is gone,
   * since the changes made since the last run would then be lost without a word; without
   * the mark but with the slot, an earlier start was cut short in its initial snapshot,
   * which is said (the new snapshot has no delete for a row the cut one delivered).
   */
  static void resumeFromSlotIfDelivered(Properties props, SnapshotMark mark, Path offsets)
      throws IOException, SQLException, ResumeCheck.CannotResume {
    String mode = props.getProperty("snapshot.mode");
    if (SnapshotMark.hasStoredOffsets(offsets)
        || !("initial".equals(mode) || "when_needed".equals(mode))) {
      return;
    }
    String slot = props.getProperty("slot.name");
    if (!mark.isSet()) {
      if (slotExistsIfReachable(props, slot)) {
        LOG.info(
            "no offset stored, but replication slot '{}' exists: an earlier start was cut short "
                + "during its initial snapshot. This one snapshots again, then deletes the rows "
                + "the cut one delivered and no longer finds (SnapshotKeys).",
            slot);
      }
      return;
    }
    if (!slotExists(props, slot)) {
      throw new ResumeCheck.CannotResume(
          "slot_missing",
          "the CDC capture cannot resume: it delivered changes before (" + mark.file() + ") but "
              + "stored no offset, and replication slot '" + slot + "' does not exist in "
              + "database '" + props.getProperty("database.dbname") + "' on " + where(props)
              + ": the changes made since cannot be replayed. To start the capture over: "
              + "`lakehouse cdc reset`.");
    }
    LOG.warn(
        "changes were delivered before but no offset is stored (a stop or crash during the "
            + "first batch): streaming from slot '{}' instead of snapshotting again",
        slot);
    props.setProperty("snapshot.mode", "no_data");
  }

  /** slotExists, false when the database cannot be asked (Debezium then says why). */
  static boolean slotExistsIfReachable(Properties props, String slot) {
    try {
      return slotExists(props, slot);
    } catch (SQLException e) {
      return false;
    }
  }

  static boolean slotExists(Properties props, String slot) throws SQLException {
    String url =
        "jdbc:postgresql://" + props.getProperty("database.hostname") + ":"
            + props.getProperty("database.port") + "/" + props.getProperty("database.dbname");
    try (Connection conn =
            DriverManager.getConnection(
                url, props.getProperty("database.user"), props.getProperty("database.password"));
        PreparedStatement query =
            conn.prepareStatement("SELECT 1 FROM pg_replication_slots WHERE slot_name = ?")) {
      query.setString(1, slot);
      try (ResultSet found = query.executeQuery()) {
        return found.next();
      }
    }
  }

  /**
   * Whether the connector streams from its replication slot: after the snapshot, changes
   * are captured one by one (before, the snapshot reads each row as it is then). Read from
   * Debezium's streaming metrics MBean.
   */
  static boolean streaming(String topicPrefix) {
    try {
      ObjectName name =
          new ObjectName(
              "debezium.postgres:type=connector-metrics,context=streaming,server=" + topicPrefix);
      MBeanServer server = ManagementFactory.getPlatformMBeanServer();
      return server.isRegistered(name) && Boolean.TRUE.equals(server.getAttribute(name, "Connected"));
    } catch (JMException e) {
      return false;
    }
  }

  static HttpServer healthServer(
      Map<String, String> env,
      AtomicReference<String> state,
      KinesisSink sink,
      String topicPrefix,
      CaptureState capture)
      throws IOException {
    int port = Integer.parseInt(env(env, "CDC_HEALTH_PORT"));
    HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", port), 0);
    server.createContext(
        "/health",
        exchange -> {
          String current = state.get();
          String pending =
              String.join(",", capture.pending().stream().map(t -> "\"" + t + "\"").toList());
          String failed =
              String.join(
                  ",",
                  capture.failed().entrySet().stream()
                      .map(e -> "\"" + e.getKey() + "\":\"" + e.getValue() + "\"")
                      .toList());
          String body =
              String.format(
                  "{\"state\":\"%s\",\"streaming\":%b,\"events_written\":%d,"
                      + "\"last_batch_ms\":%d,\"snapshots_pending\":[%s],"
                      + "\"snapshots_failed\":{%s}}",
                  current,
                  streaming(topicPrefix),
                  sink.written(),
                  sink.lastBatchMillis(),
                  pending,
                  failed);
          byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
          exchange.getResponseHeaders().add("Content-Type", "application/json");
          exchange.sendResponseHeaders("running".equals(current) ? 200 : 503, bytes.length);
          try (OutputStream out = exchange.getResponseBody()) {
            out.write(bytes);
          }
        });
    server.start();
    return server;
  }
}
