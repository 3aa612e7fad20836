package lakehouse.kinesis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import lakehouse.kinesis.KinesisOptions.StartingPosition;
import org.junit.jupiter.api.Test;

class ShardLineageTest {
  private static final String S0 = "shardId-000000000000";
  private static final String S1 = "shardId-000000000001";
  private static final String S2 = "shardId-000000000002";
  private static final String S3 = "shardId-000000000003";

  private static ShardDescription open(String id, String parent, String adjacent) {
    return new ShardDescription(id, parent, adjacent, false);
  }

  private static ShardDescription closed(String id, String parent, String adjacent) {
    return new ShardDescription(id, parent, adjacent, true);
  }

  private static StreamOffset drain(StreamOffset o, String shard) {
    return o.with(o.get(shard).orElseThrow().consumedThrough("1", "2").asDrained());
  }

  @Test
  void initialTrimHorizonReadsEveryShardParentsFirst() {
    // S0 was split into S1 and S2 before the query started.
    List<ShardDescription> listed = List.of(closed(S0, null, null), open(S1, S0, null),
        open(S2, S0, null));
    StreamOffset o = ShardLineage.initial("s", listed, StartingPosition.TRIM_HORIZON);
    assertEquals(3, o.shards().size());
    assertEquals(List.of(S0), ShardLineage.readableShards(o));
  }

  @Test
  void initialLatestSkipsClosedShardsAndStartsOpenOnesAtLatest() {
    List<ShardDescription> listed = List.of(closed(S0, null, null), open(S1, S0, null),
        open(S2, S0, null));
    StreamOffset o = ShardLineage.initial("s", listed, StartingPosition.LATEST);
    assertTrue(o.get(S0).orElseThrow().drained);
    assertTrue(o.get(S1).orElseThrow().startAtLatest);
    assertEquals(List.of(S1, S2), ShardLineage.readableShards(o));
  }

  @Test
  void splitChildrenWaitForTheirParentToDrain() {
    StreamOffset o = ShardLineage.initial("s", List.of(open(S0, null, null), open(S1, null, null)),
        StartingPosition.TRIM_HORIZON);
    // S0 is split into S2 and S3 while the query runs: they appear at TRIM_HORIZON...
    o = ShardLineage.reconcile(o, List.of(closed(S0, null, null), open(S1, null, null),
        open(S2, S0, null), open(S3, S0, null)));
    assertEquals(4, o.shards().size());
    assertEquals(StartingPoint.trimHorizon(), o.get(S2).orElseThrow().nextReadStart());
    assertEquals(List.of(S0), o.get(S2).orElseThrow().parentShardIds);
    // ...but are not read before S0 is drained
    assertEquals(List.of(S0, S1), ShardLineage.readableShards(o));
    o = drain(o, S0);
    assertEquals(List.of(S1, S2, S3), ShardLineage.readableShards(o));
  }

  @Test
  void mergedChildWaitsForBothParents() {
    StreamOffset o = ShardLineage.initial("s", List.of(open(S0, null, null), open(S1, null, null)),
        StartingPosition.TRIM_HORIZON);
    o = ShardLineage.reconcile(o, List.of(closed(S0, null, null), closed(S1, null, null),
        open(S2, S0, S1)));
    assertEquals(List.of(S0, S1), o.get(S2).orElseThrow().parentShardIds);
    assertEquals(List.of(S0, S1), ShardLineage.readableShards(o));
    o = drain(o, S0);
    assertEquals(List.of(S1), ShardLineage.readableShards(o), "adjacent parent not drained yet");
    o = drain(o, S1);
    assertEquals(List.of(S2), ShardLineage.readableShards(o));
  }

  @Test
  void shardsThatAgedOutAreForgottenAndNoLongerBlockChildren() {
    StreamOffset o = ShardLineage.initial("s", List.of(closed(S0, null, null), open(S1, S0, null)),
        StartingPosition.TRIM_HORIZON);
    assertEquals(List.of(S0), ShardLineage.readableShards(o));
    // S0 passes the retention period and disappears from ListShards
    o = ShardLineage.reconcile(o, List.of(open(S1, S0, null)));
    assertFalse(o.contains(S0));
    assertEquals(List.of(S1), ShardLineage.readableShards(o));
  }

  @Test
  void reconcileKeepsProgressOfKnownShards() {
    StreamOffset o = ShardLineage.initial("s", List.of(open(S0, null, null)),
        StartingPosition.TRIM_HORIZON);
    o = o.with(o.get(S0).orElseThrow().consumedThrough("1", "42"));
    StreamOffset again = ShardLineage.reconcile(o, List.of(open(S0, null, null)));
    assertEquals(o, again, "no new shard, no change: Spark sees no new data");
  }
}
