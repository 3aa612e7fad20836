package lakehouse.cdc;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.util.Set;

/**
 * What the service reads of a Debezium change event (JSON, with or without its schema): its
 * {@code source} block's snapshot flag, log position and commit time. Anything without a
 * source block (a heartbeat, not JSON) has none of them.
 */
record EventSource(String snapshot, Long lsn, Long tsMs) {
  /** source.snapshot of the events read by a snapshot; the rest are streamed changes. */
  private static final Set<String> SNAPSHOT_VALUES =
      Set.of("true", "first", "first_in_data_collection", "last_in_data_collection", "last");

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final EventSource NONE = new EventSource(null, null, null);

  static EventSource of(String value) {
    if (value == null) {
      return NONE;
    }
    try {
      JsonNode event = JSON.readTree(value);
      JsonNode payload = event.path("payload");
      JsonNode source = (payload.isObject() ? payload : event).path("source");
      JsonNode snapshot = source.path("snapshot");
      return new EventSource(
          snapshot.isTextual() ? snapshot.asText() : null,
          source.path("lsn").canConvertToLong() ? source.path("lsn").asLong() : null,
          source.path("ts_ms").canConvertToLong() ? source.path("ts_ms").asLong() : null);
    } catch (IOException notJson) {
      return NONE;
    }
  }

  /** Read by the initial snapshot (an incremental snapshot's events count as streamed). */
  boolean fromSnapshot() {
    return snapshot != null && SNAPSHOT_VALUES.contains(snapshot);
  }

  /** The snapshot's last event: every row it read is delivered with it. */
  boolean endsSnapshot() {
    return "last".equals(snapshot);
  }
}
