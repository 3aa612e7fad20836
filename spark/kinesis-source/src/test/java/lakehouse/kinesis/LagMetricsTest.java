package lakehouse.kinesis;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

class LagMetricsTest {
  @Test
  void theSlowestShardTheShardsBehindAndEachShardsFigureAcrossStreams() {
    Map<String, Map<String, Long>> lags = new TreeMap<>(Map.of(
        "orders", new TreeMap<>(Map.of("shardId-000000000000", 0L, "shardId-000000000001", 2500L)),
        "cdc.public.items", new TreeMap<>(Map.of("shardId-000000000000", 40L))));
    Map<String, String> metrics = KinesisMicroBatchStream.lagMetrics(lags, List.of("gone"));
    assertEquals("2500", metrics.get("maxMillisBehindLatest"));
    assertEquals("2", metrics.get("shardsWithLag"));
    assertEquals("gone", metrics.get("missingStreams"));
    assertEquals("{\"cdc.public.items\":{\"shardId-000000000000\":40},"
        + "\"orders\":{\"shardId-000000000000\":0,\"shardId-000000000001\":2500}}",
        metrics.get("millisBehindLatestByShard"));
  }

  @Test
  void noStreamReadYetIsNoLag() {
    Map<String, String> metrics = KinesisMicroBatchStream.lagMetrics(Map.of(), List.of());
    assertEquals("0", metrics.get("maxMillisBehindLatest"));
    assertEquals("{}", metrics.get("millisBehindLatestByShard"));
    assertEquals("", metrics.get("missingStreams"));
  }
}
