package lakehouse.kinesis;

import java.util.ArrayList;
import java.util.List;

/**
 * An in-memory shard answering like Kinesis: pages of at most {@code limit} records, a null
 * next iterator once a closed shard is exhausted, and a configurable MillisBehindLatest (fixed, as
 * kinesalite does, or computed, as AWS does). Records can be appended while readers read it, and
 * {@link #reader} opens one where GetShardIterator would.
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
    return record(seq, 1000L);
  }

  static KinesisRecord record(long seq, long arrivalMillis) {
    return new KinesisRecord(("r" + seq).getBytes(), "k" + (seq % 3), Long.toString(seq),
        arrivalMillis);
  }

  FakeShard from(int index) {
    position = index;
    return this;
  }

  /** Appends records numbered after the last one, arriving at the given times. */
  FakeShard arrive(long... arrivalMillis) {
    long next = records.isEmpty() ? 1 : Long.parseLong(lastSequenceNumber()) + 1;
    for (long arrival : arrivalMillis) {
      records.add(record(next++, arrival));
    }
    return this;
  }

  String lastSequenceNumber() {
    return records.get(records.size() - 1).sequenceNumber;
  }

  /** A new reader where GetShardIterator would start for this point (LATEST: the tip now). */
  RecordSource reader(StartingPoint start) {
    int index = 0;
    switch (start.type) {
      case TRIM_HORIZON:
        break;
      case AT_TIMESTAMP:
        while (index < records.size()
            && records.get(index).approximateArrivalMillis < start.timestampMillis) {
          index++;
        }
        break;
      default:
        while (index < records.size() && SequenceNumbers.compare(
            records.get(index).sequenceNumber, start.sequenceNumber) < 0) {
          index++;
        }
        if (start.type == StartingPoint.Type.AFTER_SEQUENCE_NUMBER && index < records.size()
            && records.get(index).sequenceNumber.equals(start.sequenceNumber)) {
          index++;
        }
    }
    int[] at = {index};
    return limit -> {
      Page page = page(at[0], limit);
      at[0] += page.records.size();
      return page;
    };
  }

  @Override
  public Page next(int limit) {
    calls++;
    limits.add(limit);
    Page page = page(position, limit);
    position += page.records.size();
    return page;
  }

  private Page page(int from, int limit) {
    int end = Math.min(records.size(), from + limit);
    List<KinesisRecord> page = new ArrayList<>(records.subList(from, end));
    boolean exhausted = end == records.size();
    // Like kinesalite: the end of a closed shard is announced on an empty page.
    boolean endOfShard = closed && exhausted && page.isEmpty();
    long behind = fixedMillisBehind != null ? fixedMillisBehind : (exhausted ? 0L : 1000L);
    return new Page(page, endOfShard, behind);
  }
}
