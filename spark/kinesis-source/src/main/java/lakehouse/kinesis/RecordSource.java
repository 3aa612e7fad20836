package lakehouse.kinesis;

/** Pages of one shard, read forward. {@link ShardCursor} reads Kinesis; tests use fakes. */
public interface RecordSource {
  Page next(int limit);
}
