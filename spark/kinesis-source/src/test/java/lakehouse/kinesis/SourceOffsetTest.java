package lakehouse.kinesis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class SourceOffsetTest {
  private static StreamOffset stream(String name, String last) {
    return new StreamOffset(name, name + "-arn@1", List.of(
        new ShardPosition("shardId-000000000000", List.of(), last, 1_795_400_000_000L, null,
            false)));
  }

  @Test
  void oneStreamIsWrittenAsBeforeSoOldCheckpointsResumeUnchanged() {
    StreamOffset orders = stream("orders", "49");
    SourceOffset one = SourceOffset.of(orders);
    assertEquals(orders.toJson(), one.toJson());
    assertEquals(one, SourceOffset.fromJson(orders.toJson()));
  }

  @Test
  void severalStreamsRoundTripSortedByName() {
    SourceOffset both = new SourceOffset(Map.of("b", stream("b", "2"), "a", stream("a", "1")));
    String json = both.toJson();
    assertTrue(json.startsWith("{\"version\":2,\"streams\":{\"a\":"), json);
    SourceOffset back = SourceOffset.fromJson(json);
    assertEquals(both, back);
    assertEquals(json, back.toJson());
    assertEquals("2", back.get("b").orElseThrow().get("shardId-000000000000").orElseThrow()
        .lastSequenceNumber);
  }

  @Test
  void aStreamAddedToAnOffsetKeepsTheOthers() {
    SourceOffset grown = SourceOffset.of(stream("a", "1")).with(stream("b", "5"))
        .with(stream("a", "3"));
    assertEquals(List.of("a", "b"), List.copyOf(grown.streams().keySet()));
    assertEquals("3", grown.get("a").orElseThrow().get("shardId-000000000000").orElseThrow()
        .lastSequenceNumber);
  }

  @Test
  void anEntryWhoseStreamDiffersFromItsNameIsRefused() {
    String json = "{\"version\":2,\"streams\":{\"a\":" + stream("b", "1").toJson() + ",\"c\":"
        + stream("c", "1").toJson() + "}}";
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> SourceOffset.fromJson(json));
    assertTrue(e.getMessage().contains("entry 'a' holds the positions of stream 'b'"),
        e.getMessage());
  }
}
