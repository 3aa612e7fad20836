package lakehouse.kinesis;

import org.apache.spark.sql.connector.read.streaming.Offset;

/** Spark's view of a {@link SourceOffset}; Spark compares offsets by their JSON. */
public final class KinesisOffset extends Offset {
  public final SourceOffset state;

  public KinesisOffset(SourceOffset state) {
    this.state = state;
  }

  @Override
  public String json() {
    return state.toJson();
  }
}
