package lakehouse.kinesis;

import com.amazonaws.services.kinesis.AmazonKinesis;
import com.amazonaws.services.kinesis.model.AmazonKinesisException;
import com.amazonaws.services.kinesis.model.DescribeStreamRequest;
import com.amazonaws.services.kinesis.model.DescribeStreamResult;
import com.amazonaws.services.kinesis.model.ListShardsRequest;
import com.amazonaws.services.kinesis.model.ListShardsResult;
import com.amazonaws.services.kinesis.model.ResourceNotFoundException;
import com.amazonaws.services.kinesis.model.Shard;
import com.amazonaws.services.kinesis.model.StreamDescription;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;

/** Lists a stream's shards (all of them, open and closed, within retention). */
public final class ShardLister {
  private final AmazonKinesis client;
  private final KinesisOptions options;
  private final KinesisRetry retry;

  public ShardLister(AmazonKinesis client, KinesisOptions options) {
    this.client = client;
    this.options = options;
    this.retry = new KinesisRetry(Backoff.defaults(),
        "stream '" + options.streamName + "' at " + options.endpointDescription());
  }

  public List<ShardDescription> list() {
    return withRetries("ListShards", () -> describe(listRaw()));
  }

  /** Bounded retries as for reads (KinesisRetry); a missing stream is an error naming it. */
  private <T> T withRetries(String operation, Supplier<T> call) {
    try {
      return retry.call(operation, call);
    } catch (ResourceNotFoundException e) {
      throw new StreamNotFoundException(options.streamName, "Kinesis stream '"
          + options.streamName + "' does not exist at " + options.endpointDescription() + ".", e);
    }
  }

  /**
   * The stream's incarnation and retention, from DescribeStream (which every emulator answers) with
   * one shard asked for.
   */
  public StreamInfo streamInfo() {
    return withRetries("DescribeStream", () -> {
      StreamDescription d = client.describeStream(new DescribeStreamRequest()
          .withStreamName(options.streamName).withLimit(1)).getStreamDescription();
      long created = d.getStreamCreationTimestamp() == null
          ? 0L : d.getStreamCreationTimestamp().getTime();
      // Kinesis' minimum when an engine leaves it out: the guard then errs towards warning early.
      int hours = d.getRetentionPeriodHours() == null ? 24 : d.getRetentionPeriodHours();
      return new StreamInfo(d.getStreamARN() + "@" + created, hours * 3_600_000L);
    });
  }

  private List<Shard> listRaw() {
    try {
      return listShards();
    } catch (AmazonKinesisException e) {
      // Older emulators lack ListShards; DescribeStream carries the same shard list.
      if ("UnknownOperationException".equals(e.getErrorCode())
          || "InvalidAction".equals(e.getErrorCode())) {
        return describeStream();
      }
      throw e;
    }
  }

  private List<Shard> listShards() {
    List<Shard> shards = new ArrayList<>();
    ListShardsRequest request = new ListShardsRequest().withStreamName(options.streamName);
    while (true) {
      ListShardsResult result = client.listShards(request);
      shards.addAll(result.getShards());
      if (result.getNextToken() == null || result.getShards().isEmpty()) {
        return shards;
      }
      // NextToken and StreamName are mutually exclusive in ListShards.
      request = new ListShardsRequest().withNextToken(result.getNextToken());
    }
  }

  private List<Shard> describeStream() {
    List<Shard> shards = new ArrayList<>();
    String lastShardId = null;
    while (true) {
      DescribeStreamResult result = client.describeStream(new DescribeStreamRequest()
          .withStreamName(options.streamName).withExclusiveStartShardId(lastShardId));
      List<Shard> page = result.getStreamDescription().getShards();
      shards.addAll(page);
      if (!result.getStreamDescription().isHasMoreShards() || page.isEmpty()) {
        return shards;
      }
      lastShardId = page.get(page.size() - 1).getShardId();
    }
  }

  private static List<ShardDescription> describe(List<Shard> shards) {
    List<ShardDescription> out = new ArrayList<>();
    for (Shard s : shards) {
      boolean closed = s.getSequenceNumberRange() != null
          && s.getSequenceNumberRange().getEndingSequenceNumber() != null;
      out.add(new ShardDescription(s.getShardId(), s.getParentShardId(),
          s.getAdjacentParentShardId(), closed));
    }
    return out;
  }
}
