package lakehouse.kinesis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class RangeReaderTest {

  private static List<String> readAll(RangeReader reader) {
    List<String> seqs = new ArrayList<>();
    while (reader.hasNext()) {
      seqs.add(reader.next().sequenceNumber);
    }
    return seqs;
  }

  @Test
  void readsExactlyUpToTheEndInclusive() {
    FakeShard shard = new FakeShard(50, 100).from(5); // the batch starts after record 104
    List<String> seqs = readAll(new RangeReader(shard, "s0", "112", 4));
    assertEquals(8, seqs.size());
    assertEquals("105", seqs.get(0));
    assertEquals("112", seqs.get(7));
  }

  @Test
  void endOnAPageBoundaryNeedsNoExtraCall() {
    FakeShard shard = new FakeShard(50, 1);
    assertEquals(8, readAll(new RangeReader(shard, "s0", "8", 4)).size());
    assertEquals(2, shard.calls);
  }

  @Test
  void missingRecordsFailLoudly() {
    FakeShard shard = new FakeShard(5, 1);
    shard.closed = true;
    RangeReader reader = new RangeReader(shard, "s0", "9", 10);
    assertThrows(IllegalStateException.class, () -> readAll(reader));
  }

  @Test
  void aShardThatSkipsPastTheEndFailsLoudly() {
    // A stream recreated under its name: its sequence numbers do not include the end.
    FakeShard shard = new FakeShard(20, 200);
    RangeReader reader = new RangeReader(shard, "s0", "112", 4);
    IllegalStateException error = assertThrows(IllegalStateException.class, () -> readAll(reader));
    assertEquals(true, error.getMessage().contains("skips from before it to 200"));
  }
}
