package lakehouse.kinesis;

import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads each micro-batch's records, and reads the next batch's while the current one is written.
 *
 * <p>With a backlog, a batch's end is decided by reading its records (latestOffset), and nothing
 * is written meanwhile: about 2 s of every 13 s batch of 80,000 records. So when a batch ends
 * short of a shard's tip, the read of the batch after it starts at once, from its end; the next
 * latestOffset takes it if it asks for exactly that start and limit, and otherwise reads afresh.
 * Nothing read ahead is in the offset log until Spark logs what latestOffset returned, so a crash
 * loses only the work, and a replay reads the logged ranges as before.
 *
 * <p>Every read runs on this class's one thread, so two reads never overlap (a stream's shard
 * listing and record cache are its reader's). A read ahead changes no state that decides a batch:
 * the shards caught up under AvailableNow are noted when the batch is taken
 * ({@link StreamReader#noteCaughtUp}).
 */
final class ReadAhead {
  private static final Logger LOG = LoggerFactory.getLogger(ReadAhead.class);

  /** One batch as read: its end, and what each stream's shards returned. */
  static final class Batch {
    final SourceOffset end;
    final Map<String, Map<String, FetchResult>> results;

    Batch(SourceOffset end, Map<String, Map<String, FetchResult>> results) {
      this.end = end;
      this.results = results;
    }

    /** Some shard stopped short of its tip (records, bytes or time budget): more is waiting. */
    boolean behind() {
      return results.values().stream().flatMap(r -> r.values().stream())
          .anyMatch(r -> !r.caughtUp && !r.drained);
    }
  }

  private final ExecutorService thread = Executors.newSingleThreadExecutor(r -> {
    Thread t = new Thread(r, "kinesis-read");
    t.setDaemon(true);
    return t;
  });
  private SourceOffset aheadStart; // where the read ahead starts
  private OptionalLong aheadRows;
  private Future<Batch> ahead;

  /**
   * The batch starting at {@code from} with at most {@code rows}: the read ahead if it is that
   * one and succeeded, else read now (after any read still running).
   */
  Batch read(SourceOffset from, OptionalLong rows, Supplier<Batch> read) {
    Future<Batch> mine;
    boolean same;
    synchronized (this) {
      mine = ahead;
      same = mine != null && aheadStart.equals(from) && aheadRows.equals(rows);
      ahead = null;
    }
    if (mine != null) {
      try {
        Batch batch = Futures.await(mine);
        if (same) {
          return batch;
        }
        LOG.info("the batch read ahead is not the one asked for (another start or limit):"
            + " reading it afresh");
      } catch (RuntimeException e) {
        LOG.info("reading the next batch ahead failed ({}): reading it again", e.toString());
      }
    }
    return Futures.await(thread.submit(read::get));
  }

  /** Starts reading the batch at {@code from} on the reading thread, after the current read. */
  synchronized void readAhead(SourceOffset from, OptionalLong rows, Supplier<Batch> read) {
    drop();
    aheadStart = from;
    aheadRows = rows;
    ahead = thread.submit(read::get);
  }

  /** Cancels a read ahead; its records are never used. Returns at once. */
  synchronized void drop() {
    if (ahead != null) {
      ahead.cancel(true);
      ahead = null;
    }
  }

  synchronized void stop() {
    drop();
    thread.shutdownNow();
  }
}
