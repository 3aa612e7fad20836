package lakehouse.kinesis;

/**
 * Exponential backoff for the calls {@link KinesisRetry} retries (throttling, 5xx, network
 * errors): the delay doubles from {@code baseMs} up to {@code capMs}; after {@code maxAttempts}
 * the caller gives up. The defaults give up after about 36 s of failures in a row.
 */
public final class Backoff {
  public final long baseMs;
  public final long capMs;
  public final int maxAttempts;

  public Backoff(long baseMs, long capMs, int maxAttempts) {
    this.baseMs = baseMs;
    this.capMs = capMs;
    this.maxAttempts = maxAttempts;
  }

  public static Backoff defaults() {
    return new Backoff(200, 5_000, 12);
  }

  /** Delay before retry number {@code attempt} (1-based). */
  public long delayMs(int attempt) {
    int shift = Math.min(Math.max(attempt - 1, 0), 30);
    return Math.min(capMs, baseMs << shift);
  }

  public boolean canRetry(int attempt) {
    return attempt < maxAttempts;
  }
}
