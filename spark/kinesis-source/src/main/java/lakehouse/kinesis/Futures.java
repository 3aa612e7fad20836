package lakehouse.kinesis;

import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;

/** Waiting for the source's reads, which run on threads of their own. */
final class Futures {
  private Futures() {}

  /** The read's result; its own failure is rethrown as it was, so the error names what failed. */
  static <T> T await(Future<T> f) {
    try {
      return f.get();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("Interrupted while reading Kinesis", e);
    } catch (ExecutionException e) {
      Throwable cause = e.getCause();
      if (cause instanceof RuntimeException) {
        throw (RuntimeException) cause;
      }
      throw new IllegalStateException("Reading Kinesis failed", cause);
    }
  }
}
