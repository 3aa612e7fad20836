package lakehouse.cdc;

import io.debezium.engine.ChangeEvent;
import io.debezium.engine.DebeziumEngine;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A fault for the end-to-end tests, off unless CDC_FAULT_HALT_IN_SNAPSHOT_BATCH=n is set: the
 * process dies at once (as kill -9 would) when the n-th batch of snapshot events is in
 * Kinesis and before the engine is told so, i.e. a crash in the middle of the initial
 * snapshot (tests/local/test_cdc_faults.py).
 */
final class HaltInSnapshot implements DebeziumEngine.ChangeConsumer<ChangeEvent<String, String>> {
  private static final Logger LOG = LoggerFactory.getLogger(HaltInSnapshot.class);
  static final String ENV = "CDC_FAULT_HALT_IN_SNAPSHOT_BATCH";

  private final DebeziumEngine.ChangeConsumer<ChangeEvent<String, String>> sink;
  private final int haltAt;
  private int snapshotBatches;

  private HaltInSnapshot(DebeziumEngine.ChangeConsumer<ChangeEvent<String, String>> sink, int haltAt) {
    this.sink = sink;
    this.haltAt = haltAt;
  }

  static DebeziumEngine.ChangeConsumer<ChangeEvent<String, String>> wrap(
      DebeziumEngine.ChangeConsumer<ChangeEvent<String, String>> sink, Map<String, String> env) {
    String n = env.getOrDefault(ENV, "");
    return n.isBlank() ? sink : new HaltInSnapshot(sink, Integer.parseInt(n.trim()));
  }

  @Override
  public boolean supportsTombstoneEvents() {
    return sink.supportsTombstoneEvents();
  }

  @Override
  public void handleBatch(
      List<ChangeEvent<String, String>> records,
      DebeziumEngine.RecordCommitter<ChangeEvent<String, String>> committer)
      throws InterruptedException {
    // A batch may begin with a notification of Debezium's (the snapshot's "started").
    boolean snapshot =
        records.stream().anyMatch(record -> EventSource.of(record.value()).fromSnapshot());
    if (!snapshot || ++snapshotBatches < haltAt) {
      sink.handleBatch(records, committer);
      return;
    }
    sink.handleBatch(records, new DebeziumEngine.RecordCommitter<>() {
      public void markProcessed(ChangeEvent<String, String> record) {}

      public void markProcessed(ChangeEvent<String, String> record, DebeziumEngine.Offsets offsets) {}

      public void markBatchFinished() {
        LOG.error("{}={}: halting after snapshot batch {} was put", ENV, haltAt, snapshotBatches);
        Runtime.getRuntime().halt(137);
      }

      public DebeziumEngine.Offsets buildOffsets() {
        return committer.buildOffsets();
      }
    });
  }
}
