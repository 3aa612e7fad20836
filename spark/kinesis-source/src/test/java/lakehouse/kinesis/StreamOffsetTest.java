package lakehouse.kinesis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

class StreamOffsetTest {

  @Test
  void roundTripsEveryField() {
    StreamOffset offset = new StreamOffset("orders", List.of(
        new ShardPosition("shardId-000000000002", List.of("shardId-000000000000"), "4960", false,
            null, false),
        ShardPosition.trimHorizon("shardId-000000000001", List.of()),
        new ShardPosition("shardId-000000000000", List.of(), "4950", false, null, true),
        ShardPosition.latest("shardId-000000000003", List.of("shardId-000000000001",
            "shardId-000000000000")),
        new ShardPosition("shardId-000000000004", List.of(), "77", false, "70", false)));

    StreamOffset back = StreamOffset.fromJson(offset.toJson());

    assertEquals(offset, back);
    assertEquals(offset.toJson(), back.toJson());
    assertEquals("orders", back.streamName);
    assertTrue(back.get("shardId-000000000000").orElseThrow().drained);
    assertTrue(back.get("shardId-000000000003").orElseThrow().startAtLatest);
    assertEquals("70", back.get("shardId-000000000004").orElseThrow().firstSequenceNumber);
    assertEquals(List.of("shardId-000000000001", "shardId-000000000000"),
        back.get("shardId-000000000003").orElseThrow().parentShardIds);
  }

  @Test
  void jsonDoesNotDependOnInsertionOrder() {
    ShardPosition a = new ShardPosition("shardId-000000000000", List.of(), "1", false, null, false);
    ShardPosition b = new ShardPosition("shardId-000000000001", List.of(), "2", false, null, false);
    assertEquals(new StreamOffset("s", List.of(a, b)).toJson(),
        new StreamOffset("s", List.of(b, a)).toJson());
  }

  @Test
  void jsonIsReadable() {
    StreamOffset offset = new StreamOffset("s", List.of(
        new ShardPosition("shardId-000000000000", List.of(), "123", false, null, false)));
    assertEquals("{\"version\":1,\"stream\":\"s\",\"shards\":{\"shardId-000000000000\":"
        + "{\"parents\":[],\"lastSequenceNumber\":\"123\",\"drained\":false}}}", offset.toJson());
  }

  @Test
  void withReplacesOneShard() {
    StreamOffset offset = new StreamOffset("s", List.of(
        ShardPosition.trimHorizon("a", List.of()), ShardPosition.trimHorizon("b", List.of())));
    StreamOffset moved = offset.with(offset.get("a").orElseThrow().consumedThrough("5", "9"));
    assertEquals("9", moved.get("a").orElseThrow().lastSequenceNumber);
    assertEquals(null, offset.get("a").orElseThrow().lastSequenceNumber);
    assertEquals(2, moved.shards().size());
  }

  @Test
  void rejectsForeignJson() {
    assertThrows(IllegalArgumentException.class, () -> StreamOffset.fromJson("{\"a\":1}"));
    assertThrows(IllegalArgumentException.class, () -> StreamOffset.fromJson("not json"));
  }

  @Test
  void theStreamIdentityTravelsWithThePositions() {
    String identity = "arn:aws:kinesis:us-east-1:000000000000:stream/orders@1795400000000";
    StreamOffset offset = new StreamOffset("orders", List.of(
        ShardPosition.trimHorizon("shardId-000000000000", List.of()))).withIdentity(identity);
    StreamOffset moved = offset.with(
        new ShardPosition("shardId-000000000000", List.of(), "42", false, null, false));

    assertEquals(identity, moved.streamIdentity);
    assertEquals(identity, StreamOffset.fromJson(moved.toJson()).streamIdentity);
    // Offsets written before the identity was recorded still load, without one.
    String old = new StreamOffset("orders", offset.shards()).toJson();
    assertEquals(null, StreamOffset.fromJson(old).streamIdentity);
  }
}
