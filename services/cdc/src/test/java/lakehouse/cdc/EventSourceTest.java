package lakehouse.cdc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class EventSourceTest {
  static boolean fromSnapshot(String value) {
    return EventSource.of(value).fromSnapshot();
  }

  @Test
  void snapshotEventsAreToldFromStreamedOnes() {
    assertTrue(fromSnapshot("{\"op\":\"r\",\"source\":{\"snapshot\":\"true\"}}"));
    assertTrue(fromSnapshot("{\"op\":\"r\",\"source\":{\"snapshot\":\"last\"}}"));
    assertTrue(
        fromSnapshot("{\"schema\":{},\"payload\":{\"op\":\"r\",\"source\":{\"snapshot\":\"first\"}}}"));
    assertFalse(fromSnapshot("{\"op\":\"u\",\"source\":{\"snapshot\":\"false\"}}"));
    assertFalse(fromSnapshot("{\"op\":\"r\",\"source\":{\"snapshot\":\"incremental\"}}"));
    // A column named snapshot is not the source's.
    assertFalse(fromSnapshot("{\"op\":\"c\",\"after\":{\"snapshot\":\"true\"},\"source\":{}}"));
    assertFalse(fromSnapshot("{\"ts_ms\":1}")); // a heartbeat
    assertFalse(fromSnapshot("not json"));
    assertFalse(fromSnapshot(null));
  }

  @Test
  void theSnapshotsEndPositionAndTimeAreRead() {
    EventSource last =
        EventSource.of("{\"op\":\"r\",\"source\":{\"snapshot\":\"last\",\"lsn\":123,\"ts_ms\":45}}");
    assertTrue(last.endsSnapshot());
    assertEquals(new EventSource("last", 123L, 45L), last);
    assertFalse(EventSource.of("{\"op\":\"r\",\"source\":{\"snapshot\":\"true\"}}").endsSnapshot());
    assertEquals(new EventSource(null, null, null), EventSource.of("{\"ts_ms\":1}"));
  }
}
