package lakehouse.kinesis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

class StreamOffsetTest {

  @Test
  void roundTripsEveryField() {
    StreamOffset offset = new StreamOffset("orders", List.of(
        new ShardPosition("shardId-000000000002", List.of("shardId-000000000000"), "4960", null,
            null, false),
        ShardPosition.trimHorizon("shardId-000000000001", List.of()),
        new ShardPosition("shardId-000000000000", List.of(), "4950", null, null, true),
        ShardPosition.atTimestamp("shardId-000000000003", List.of("shardId-000000000001",
            "shardId-000000000000"), 1_795_400_000_000L),
        new ShardPosition("shardId-000000000004", List.of(), "77", 1_795_400_001_234L, null,
            false)));

    StreamOffset back = StreamOffset.fromJson(offset.toJson());

    assertEquals(offset, back);
    assertEquals(offset.toJson(), back.toJson());
    assertEquals("orders", back.streamName);
    assertTrue(back.get("shardId-000000000000").orElseThrow().drained);
    assertEquals(1_795_400_000_000L,
        back.get("shardId-000000000003").orElseThrow().startTimestampMillis);
    assertEquals(1_795_400_001_234L,
        back.get("shardId-000000000004").orElseThrow().lastArrivalMillis);
    assertEquals(List.of("shardId-000000000001", "shardId-000000000000"),
        back.get("shardId-000000000003").orElseThrow().parentShardIds);
  }

  @Test
  void jsonDoesNotDependOnInsertionOrder() {
    ShardPosition a = new ShardPosition("shardId-000000000000", List.of(), "1", null, null, false);
    ShardPosition b = new ShardPosition("shardId-000000000001", List.of(), "2", null, null, false);
    assertEquals(new StreamOffset("s", List.of(a, b)).toJson(),
        new StreamOffset("s", List.of(b, a)).toJson());
  }

  @Test
  void jsonIsReadable() {
    StreamOffset offset = new StreamOffset("s", List.of(
        new ShardPosition("shardId-000000000000", List.of(), "123", null, null, false)));
    assertEquals("{\"version\":1,\"stream\":\"s\",\"shards\":{\"shardId-000000000000\":"
        + "{\"parents\":[],\"lastSequenceNumber\":\"123\",\"drained\":false}}}", offset.toJson());
  }

  @Test
  void withReplacesOneShard() {
    StreamOffset offset = new StreamOffset("s", List.of(
        ShardPosition.trimHorizon("a", List.of()), ShardPosition.trimHorizon("b", List.of())));
    StreamOffset moved = offset.with(offset.get("a").orElseThrow().consumedThrough("9", 1000L));
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
        new ShardPosition("shardId-000000000000", List.of(), "42", null, null, false));

    assertEquals(identity, moved.streamIdentity);
    assertEquals(identity, StreamOffset.fromJson(moved.toJson()).streamIdentity);
    // Offsets written before the identity was recorded still load, without one.
    String old = new StreamOffset("orders", offset.shards()).toJson();
    assertEquals(null, StreamOffset.fromJson(old).streamIdentity);
  }

  @Test
  void aLatestStartAndTheLastArrivalAreWrittenOnlyWhenKnown() {
    StreamOffset offset = new StreamOffset("s", List.of(
        ShardPosition.atTimestamp("shardId-000000000000", List.of(), 1_795_400_000_000L),
        ShardPosition.trimHorizon("shardId-000000000001", List.of()).consumedThrough("9", 77L)));
    assertEquals("{\"version\":1,\"stream\":\"s\",\"shards\":{\"shardId-000000000000\":"
        + "{\"parents\":[],\"startAtTimestamp\":1795400000000,\"drained\":false},"
        + "\"shardId-000000000001\":{\"parents\":[],\"lastSequenceNumber\":\"9\","
        + "\"lastArrivalMillis\":77,\"drained\":false}}}", offset.toJson());
  }

  @Test
  void legacyLatestShardsWithNothingConsumedAreReadFromTrimHorizon() {
    // As the source wrote it before LATEST was fixed to a time: LATEST kept as a symbol, and the
    // first consumed record of a LATEST shard's first batch as that range's anchor.
    String legacy = "{\"version\":1,\"stream\":\"s\",\"shards\":{"
        + "\"shardId-000000000000\":{\"parents\":[],\"startAtLatest\":true,\"drained\":false},"
        + "\"shardId-000000000001\":{\"parents\":[],\"lastSequenceNumber\":\"180\","
        + "\"firstSequenceNumber\":\"100\",\"drained\":false},"
        + "\"shardId-000000000002\":{\"parents\":[],\"startAtLatest\":true,\"drained\":true}}}";

    StreamOffset offset = StreamOffset.fromJson(legacy);

    // The start time is unknown, so none of what arrived after it can be told apart: all is read.
    ShardPosition unread = offset.get("shardId-000000000000").orElseThrow();
    assertEquals(StartingPoint.trimHorizon(), unread.nextReadStart());
    // A consumed shard goes on after its last record, with or without the old anchor.
    ShardPosition consumed = offset.get("shardId-000000000001").orElseThrow();
    assertEquals(StartingPoint.afterSequence("180"), consumed.nextReadStart());
    assertEquals(null, consumed.lastArrivalMillis);
    assertTrue(offset.get("shardId-000000000002").orElseThrow().drained);
    // Written back in the current form, which loads to the same positions.
    assertEquals(offset, StreamOffset.fromJson(offset.toJson()));
    assertFalse(offset.toJson().contains("startAtLatest"));
  }
}
