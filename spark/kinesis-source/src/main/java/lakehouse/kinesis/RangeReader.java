package lakehouse.kinesis;

import java.util.ArrayDeque;
import java.util.Deque;
import java.util.NoSuchElementException;

/**
 * Re-reads exactly the records up to and including {@code endSequenceNumber} from a source that
 * starts right after the batch's start offset: the replay path, used when the driver's cache does
 * not have the batch (after a restart) or the batch was too big to ship inline. The end record
 * itself must be met: a shard that skips past it, or ends before it, fails the batch loudly.
 */
public final class RangeReader {
  private final RecordSource source;
  private final String endSequenceNumber;
  private final int maxRecordsPerCall;
  private final String shardId;
  private final Deque<KinesisRecord> buffer = new ArrayDeque<>();
  private boolean reachedEnd;
  private int emptyPagesAtTip;

  public RangeReader(RecordSource source, String shardId, String endSequenceNumber,
      int maxRecordsPerCall) {
    this.source = source;
    this.shardId = shardId;
    this.endSequenceNumber = endSequenceNumber;
    this.maxRecordsPerCall = maxRecordsPerCall;
  }

  public boolean hasNext() {
    while (buffer.isEmpty() && !reachedEnd) {
      fill();
    }
    return !buffer.isEmpty();
  }

  public KinesisRecord next() {
    if (!hasNext()) {
      throw new NoSuchElementException();
    }
    return buffer.poll();
  }

  private void fill() {
    Page page = source.next(maxRecordsPerCall);
    for (KinesisRecord r : page.records) {
      int cmp = SequenceNumbers.compare(r.sequenceNumber, endSequenceNumber);
      if (cmp > 0) {
        // Past the end without meeting it: the batch's last record is gone, so the shard
        // was trimmed or the stream recreated under its name. A short batch would lose
        // records silently.
        throw new IllegalStateException("Cannot replay shard " + shardId + " up to sequence number "
            + endSequenceNumber + ": the shard skips from before it to " + r.sequenceNumber
            + " (stream recreated or records trimmed?); the checkpoint no longer matches the stream");
      }
      buffer.add(r);
      if (cmp == 0) {
        reachedEnd = true;
        return;
      }
    }
    if (page.endOfShard || (page.records.isEmpty() && page.reachedTip(maxRecordsPerCall)
        && ++emptyPagesAtTip >= 3)) {
      // The range was read once, so its records existed: they can only have aged out.
      throw new IllegalStateException("Cannot replay shard " + shardId + " up to sequence number "
          + endSequenceNumber + ": the shard ends before it (records past the retention period?)");
    }
  }
}
