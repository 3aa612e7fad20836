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
    return o.with(o.get(shard).orElseThrow().consumedThrough("2", 1000L).asDrained());
  }

  @Test
  void initialTrimHorizonReadsEveryShardParentsFirst() {
    // S0 was split into S1 and S2 before the query started.
    List<ShardDescription> listed = List.of(closed(S0, null, null), open(S1, S0, null),
        open(S2, S0, null));
    StreamOffset o = ShardLineage.initial("s", listed, StartingPosition.TRIM_HORIZON, 0L);
    assertEquals(3, o.shards().size());
    assertEquals(List.of(S0), ShardLineage.readableShards(o));
  }

  @Test
  void initialLatestSkipsClosedShardsAndFixesOpenOnesToTheStartTime() {
    List<ShardDescription> listed = List.of(closed(S0, null, null), open(S1, S0, null),
        open(S2, S0, null));
    StreamOffset o = ShardLineage.initial("s", listed, StartingPosition.LATEST, 1_795_000_000_000L);
    assertTrue(o.get(S0).orElseThrow().drained);
    assertEquals(StartingPoint.atTimestamp(1_795_000_000_000L),
        o.get(S1).orElseThrow().nextReadStart());
    assertEquals(List.of(S1, S2), ShardLineage.readableShards(o));
  }

  @Test
  void aChildCreatedAfterALatestStartIsReadFromTrimHorizon() {
    StreamOffset o = ShardLineage.initial("s", List.of(open(S0, null, null)),
        StartingPosition.LATEST, 1_795_000_000_000L);
    o = ShardLineage.reconcile(o, List.of(closed(S0, null, null), open(S1, S0, null)));
    assertEquals(StartingPoint.trimHorizon(), o.get(S1).orElseThrow().nextReadStart(),
        "every record of a shard created after the start is new");
    assertEquals(List.of(S0), ShardLineage.readableShards(o));
  }

  @Test
  void splitChildrenWaitForTheirParentToDrain() {
    StreamOffset o = ShardLineage.initial("s", List.of(open(S0, null, null), open(S1, null, null)),
        StartingPosition.TRIM_HORIZON, 0L);
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
        StartingPosition.TRIM_HORIZON, 0L);
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
  void drainedShardsThatAgedOutAreForgottenAndNoLongerBlockChildren() {
    StreamOffset o = ShardLineage.initial("s", List.of(closed(S0, null, null), open(S1, S0, null)),
        StartingPosition.TRIM_HORIZON, 0L);
    assertEquals(List.of(S0), ShardLineage.readableShards(o));
    o = drain(o, S0);
    // S0 passes the retention period and disappears from ListShards
    o = ShardLineage.reconcile(o, List.of(open(S1, S0, null)));
    assertFalse(o.contains(S0));
    assertEquals(List.of(), ShardLineage.unlisted(o, List.of(open(S1, S0, null))));
    assertEquals(List.of(S1), ShardLineage.readableShards(o));
  }

  @Test
  void aShardMissingFromOneListingKeepsItsPosition() {
    List<ShardDescription> both = List.of(open(S0, null, null), open(S1, null, null));
    StreamOffset o = ShardLineage.initial("s", both, StartingPosition.TRIM_HORIZON, 0L);
    o = o.with(o.get(S0).orElseThrow().consumedThrough("42", 1000L));
    // One listing misses S0 (a lost page, an eventually consistent answer)...
    List<ShardDescription> withoutS0 = List.of(open(S1, null, null));
    o = ShardLineage.reconcile(o, withoutS0);
    assertEquals(List.of(S0), ShardLineage.unlisted(o, withoutS0));
    assertEquals(List.of(S0, S1), ShardLineage.readableShards(o), "read on; a gone shard fails");
    // ...and the next shows it again: it goes on after 42, not from TRIM_HORIZON.
    o = ShardLineage.reconcile(o, both);
    assertEquals(StartingPoint.afterSequence("42"), o.get(S0).orElseThrow().nextReadStart());
  }

  @Test
  void anUnreadShardThatDisappearsStillBlocksItsChildren() {
    StreamOffset o = ShardLineage.initial("s", List.of(closed(S0, null, null), open(S1, S0, null)),
        StartingPosition.TRIM_HORIZON, 0L);
    // S0 ages out before the query read it to its end: its child must not be read as if it had,
    // and reading S0 itself fails loudly (ShardCursorTest).
    o = ShardLineage.reconcile(o, List.of(open(S1, S0, null)));
    assertTrue(o.contains(S0));
    assertEquals(List.of(S0), ShardLineage.readableShards(o));
  }

  @Test
  void reconcileKeepsProgressOfKnownShards() {
    StreamOffset o = ShardLineage.initial("s", List.of(open(S0, null, null)),
        StartingPosition.TRIM_HORIZON, 0L);
    o = o.with(o.get(S0).orElseThrow().consumedThrough("42", 1000L));
    StreamOffset again = ShardLineage.reconcile(o, List.of(open(S0, null, null)));
    assertEquals(o, again, "no new shard, no change: Spark sees no new data");
  }
}
