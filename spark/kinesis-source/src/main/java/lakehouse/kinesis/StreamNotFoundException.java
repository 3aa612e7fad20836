package lakehouse.kinesis;

/** The named stream does not exist at the endpoint (deleted, not yet created, or misspelt). */
public final class StreamNotFoundException extends IllegalArgumentException {
  private static final long serialVersionUID = 1L;

  public final String streamName;

  public StreamNotFoundException(String streamName, String message, Throwable cause) {
    super(message, cause);
    this.streamName = streamName;
  }
}
