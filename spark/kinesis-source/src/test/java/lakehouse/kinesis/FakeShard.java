package lakehouse.kinesis;

import java.util.ArrayList;
import java.util.List;

/**
 * An in-memory shard answering like Kinesis: pages of at most {@code limit} records, a null
 * next iterator once a closed shard is exhausted, and a configurable MillisBehindLatest (fixed, as
 * kinesalite does, or computed, as AWS does).
 */
final class FakeShard implements RecordSource {
  final List<KinesisRecord> records = new ArrayList<>();
  boolean closed;
  /** null: report how far behind the tip the page ends; otherwise always report this value. */
  Long fixedMillisBehind;
  int position;
  int calls;
  final List<Integer> limits = new ArrayList<>();

  FakeShard(int count, long firstSeq) {
    for (int i = 0; i < count; i++) {
      records.add(record(firstSeq + i));
    }
  }

  static KinesisRecord record(long seq) {
    return new KinesisRecord(("r" + seq).getBytes(), "k" + (seq % 3), Long.toString(seq), 1000L);
  }

  FakeShard from(int index) {
    position = index;
    return this;
  }

  @Override
  public Page next(int limit) {
    calls++;
    limits.add(limit);
    int end = Math.min(records.size(), position + limit);
    List<KinesisRecord> page = new ArrayList<>(records.subList(position, end));
    position = end;
    boolean exhausted = position == records.size();
    // Like kinesalite: the end of a closed shard is announced on an empty page.
    boolean endOfShard = closed && exhausted && page.isEmpty();
    long behind = fixedMillisBehind != null ? fixedMillisBehind : (exhausted ? 0L : 1000L);
    return new Page(page, endOfShard, behind);
  }
}
