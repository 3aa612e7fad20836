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
import java.util.LinkedHashSet;
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
    return p;
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
    AmazonKinesis kinesis = kinesis(env);
    Streams streams = new Streams(kinesis, Integer.parseInt(env.getOrDefault("CDC_STREAM_SHARDS", "2")));
    SnapshotMark mark = SnapshotMark.besideOffsets(offsets);
    resumeFromSlotIfDelivered(props, mark, offsets);
    KinesisSink sink =
        new KinesisSink(
            kinesis,
            streams::ensure,
            Thread::sleep,
            mark,
            SnapshotKeys.besideOffsets(offsets, capturedStreams(props)),
            KinesisSink.STOP_GRACE_MS);
    // Every captured table's stream exists before the first change: a job started now
    // reads them all (a job's list of streams is fixed by its checkpoint).
    capturedStreams(props).forEach(streams::ensure);

    AtomicReference<String> state = new AtomicReference<>("starting");
    AtomicReference<Throwable> failure = new AtomicReference<>();
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

    HttpServer health = healthServer(env, state, sink, props.getProperty("topic.prefix"));
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
    done.await();
    executor.shutdown();
    health.stop(0);
    if (failure.get() != null) {
      System.exit(1);
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
      throws IOException, SQLException {
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
      throw new IllegalStateException(
          "the CDC service delivered changes before (" + mark.file() + ") but stored no offset, "
              + "and replication slot '" + slot + "' is gone: the changes made since cannot be "
              + "replayed. To start over, delete " + mark.file().getParent() + " and the "
              + "job's CDC tables, then start the service (it snapshots again).");
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
      Map<String, String> env, AtomicReference<String> state, KinesisSink sink, String topicPrefix)
      throws IOException {
    int port = Integer.parseInt(env(env, "CDC_HEALTH_PORT"));
    HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", port), 0);
    server.createContext(
        "/health",
        exchange -> {
          String current = state.get();
          String body =
              String.format(
                  "{\"state\":\"%s\",\"streaming\":%b,\"events_written\":%d,"
                      + "\"last_batch_ms\":%d}",
                  current, streaming(topicPrefix), sink.written(), sink.lastBatchMillis());
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
