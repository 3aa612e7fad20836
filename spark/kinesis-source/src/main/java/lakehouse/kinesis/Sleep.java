package lakehouse.kinesis;

/** Thread.sleep that turns an interrupt into an unchecked exception (Spark stops queries so). */
final class Sleep {
  private Sleep() {}

  static void millis(long ms) {
    if (ms <= 0) {
      return;
    }
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("Interrupted while waiting on Kinesis", e);
    }
  }
}
