package lakehouse.kinesis;

/** Kinesis kept failing a call past the source's retry bound (see {@link KinesisRetry}). */
public final class KinesisUnavailableException extends IllegalStateException {
  private static final long serialVersionUID = 1L;

  KinesisUnavailableException(String message, Throwable cause) {
    super(message, cause);
  }
}
