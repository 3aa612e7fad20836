package lakehouse.kinesis;

/**
 * Closed when the job is stopping: from then on every micro-batch of this JVM's Kinesis queries
 * ends where it starts, so the batch in flight is the last one with records.
 *
 * <p>A query is stopped cleanly only between micro-batches. With a backlog, Spark starts the
 * next batch the moment one commits, so a driver waiting for a gap could wait until the whole
 * backlog is drained; with the gate closed, the next trigger finds no new records and the query
 * idles until its next trigger, and the driver stops it then (spark/lakehouse_job/stopping.py).
 * Called through py4j by the driver: public and static.
 */
public final class ReadGate {
  private static volatile boolean closed;

  private ReadGate() {}

  /** No micro-batch started from now on reads a record. */
  public static void close() {
    closed = true;
  }

  /** For tests of one JVM that run several queries. */
  public static void reopen() {
    closed = false;
  }

  public static boolean isClosed() {
    return closed;
  }
}
