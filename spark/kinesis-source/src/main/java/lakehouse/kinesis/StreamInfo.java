package lakehouse.kinesis;

/** What DescribeStream says about the stream as a whole, asked once per query run. */
public final class StreamInfo {
  /**
   * The stream's incarnation: its ARN and creation time. A stream deleted and recreated under the
   * same name has the same ARN but another creation time.
   */
  public final String identity;
  /** RetentionPeriodHours in ms: records older than this may be deleted, read or not. */
  public final long retentionMillis;

  public StreamInfo(String identity, long retentionMillis) {
    this.identity = identity;
    this.retentionMillis = retentionMillis;
  }
}
