package lakehouse.kinesis;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;

class BatchBudgetTest {
  private static final List<String> SHARDS = List.of("a", "b", "c");

  @Test
  void withoutTotalEveryShardGetsThePerShardCap() {
    assertEquals(Map.of("a", 500, "b", 500, "c", 500),
        BatchBudget.allocate(SHARDS, 500, OptionalLong.empty(), 0));
  }

  @Test
  void totalIsSplitEvenlyAndCappedPerShard() {
    assertEquals(Map.of("a", 34, "b", 33, "c", 33),
        BatchBudget.allocate(SHARDS, 1000, OptionalLong.of(100), 0));
    assertEquals(Map.of("a", 10, "b", 10, "c", 10),
        BatchBudget.allocate(SHARDS, 10, OptionalLong.of(100), 0));
  }

  @Test
  void sumNeverExceedsTotal() {
    for (long total = 1; total < 20; total++) {
      int sum = BatchBudget.allocate(SHARDS, 1000, OptionalLong.of(total), total).values()
          .stream().mapToInt(Integer::intValue).sum();
      assertEquals(total, sum);
    }
  }

  @Test
  void tinyTotalsRotateSoNoShardStarves() {
    assertEquals(Map.of("a", 1), BatchBudget.allocate(SHARDS, 10, OptionalLong.of(1), 0));
    assertEquals(Map.of("b", 1), BatchBudget.allocate(SHARDS, 10, OptionalLong.of(1), 1));
    assertEquals(Map.of("c", 1), BatchBudget.allocate(SHARDS, 10, OptionalLong.of(1), 2));
    assertEquals(Map.of("a", 1), BatchBudget.allocate(SHARDS, 10, OptionalLong.of(1), 3));
  }

  @Test
  void noShardsNoBudget() {
    assertEquals(Map.of(), BatchBudget.allocate(List.of(), 10, OptionalLong.of(5), 0));
  }

  @Test
  void backoffDoublesUpToItsCap() {
    Backoff b = new Backoff(100, 1000, 4);
    assertEquals(100, b.delayMs(1));
    assertEquals(200, b.delayMs(2));
    assertEquals(800, b.delayMs(4));
    assertEquals(1000, b.delayMs(5));
    assertEquals(1000, b.delayMs(60));
    assertEquals(true, b.canRetry(3));
    assertEquals(false, b.canRetry(4));
  }
}
