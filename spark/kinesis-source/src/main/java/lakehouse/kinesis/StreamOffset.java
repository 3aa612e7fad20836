package lakehouse.kinesis;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The whole stream's position: one {@link ShardPosition} per known shard. Immutable. Its JSON is
 * what Spark writes to the offset log; shards are kept sorted so that equal positions give equal
 * JSON (Spark compares offsets by their JSON to decide whether there is new data).
 */
public final class StreamOffset implements Serializable {
  private static final long serialVersionUID = 1L;
  private static final Logger LOG = LoggerFactory.getLogger(StreamOffset.class);
  private static final int VERSION = 1;
  private static final ObjectMapper JSON = new ObjectMapper();

  public final String streamName;
  /**
   * Which incarnation of the named stream the positions belong to (its ARN and creation time,
   * {@link StreamInfo#identity}); null in offsets written before it was recorded. Sequence
   * numbers of a stream deleted and recreated under the same name mean nothing in the new one.
   */
  public final String streamIdentity;
  private final TreeMap<String, ShardPosition> shards;

  public StreamOffset(String streamName, Collection<ShardPosition> positions) {
    this(streamName, null, positions);
  }

  public StreamOffset(String streamName, String streamIdentity, Collection<ShardPosition> positions) {
    this.streamName = streamName;
    this.streamIdentity = streamIdentity;
    this.shards = new TreeMap<>();
    for (ShardPosition p : positions) {
      shards.put(p.shardId, p);
    }
  }

  public Collection<ShardPosition> shards() {
    return Collections.unmodifiableCollection(shards.values());
  }

  public Optional<ShardPosition> get(String shardId) {
    return Optional.ofNullable(shards.get(shardId));
  }

  public boolean contains(String shardId) {
    return shards.containsKey(shardId);
  }

  /** A copy with this shard's position replaced (or added). */
  public StreamOffset with(ShardPosition position) {
    List<ShardPosition> all = new ArrayList<>(shards.values());
    all.removeIf(p -> p.shardId.equals(position.shardId));
    all.add(position);
    return new StreamOffset(streamName, streamIdentity, all);
  }

  /** A copy that names the stream incarnation its positions belong to. */
  public StreamOffset withIdentity(String identity) {
    return new StreamOffset(streamName, identity, shards.values());
  }

  public String toJson() {
    try {
      return JSON.writeValueAsString(toJsonNode());
    } catch (Exception e) {
      throw new IllegalStateException("Cannot serialise Kinesis offset", e);
    }
  }

  /** The offset as a JSON tree: {@link SourceOffset} nests it without a text round trip. */
  ObjectNode toJsonNode() {
    ObjectNode root = JSON.createObjectNode();
    root.put("version", VERSION);
    root.put("stream", streamName);
    if (streamIdentity != null) {
      root.put("streamIdentity", streamIdentity);
    }
    ObjectNode shardsNode = root.putObject("shards");
    for (ShardPosition p : shards.values()) {
      ObjectNode s = shardsNode.putObject(p.shardId);
      ArrayNode parents = s.putArray("parents");
      p.parentShardIds.forEach(parents::add);
      if (p.lastSequenceNumber != null) {
        s.put("lastSequenceNumber", p.lastSequenceNumber);
      }
      if (p.lastArrivalMillis != null) {
        s.put("lastArrivalMillis", p.lastArrivalMillis);
      }
      if (p.startTimestampMillis != null) {
        s.put("startAtTimestamp", p.startTimestampMillis);
      }
      s.put("drained", p.drained);
    }
    return root;
  }

  public static StreamOffset fromJson(String json) {
    JsonNode root;
    try {
      root = JSON.readTree(json);
    } catch (Exception e) {
      throw new IllegalArgumentException("Not a Kinesis source offset: " + json, e);
    }
    if (root == null || !root.isObject() || root.path("version").asInt(-1) != VERSION
        || !root.path("shards").isObject()) {
      throw new IllegalArgumentException("Unsupported Kinesis source offset: " + json);
    }
    List<ShardPosition> positions = new ArrayList<>();
    Iterator<Map.Entry<String, JsonNode>> it = root.get("shards").fields();
    while (it.hasNext()) {
      Map.Entry<String, JsonNode> e = it.next();
      JsonNode s = e.getValue();
      List<String> parents = new ArrayList<>();
      s.path("parents").forEach(n -> parents.add(n.asText()));
      String last = textOrNull(s, "lastSequenceNumber");
      boolean drained = s.path("drained").asBoolean(false);
      if (last == null && !drained && s.path("startAtLatest").asBoolean(false)) {
        warnLegacyLatest(root.path("stream").asText("?"), e.getKey());
      }
      // A legacy "firstSequenceNumber" (the anchor of a LATEST shard's first range) is not read:
      // such a range now starts at TRIM_HORIZON, a superset of it, as its shard does.
      positions.add(new ShardPosition(e.getKey(), parents, last, longOrNull(s, "lastArrivalMillis"),
          longOrNull(s, "startAtTimestamp"), drained));
    }
    return new StreamOffset(root.path("stream").asText(null), textOrNull(root, "streamIdentity"),
        positions);
  }

  /**
   * Offsets written before LATEST was fixed to the query's start time kept it as a symbol. For a
   * shard with nothing consumed that start time is unknown, so the records that arrived after it
   * cannot be told from those before: the shard is read from TRIM_HORIZON, which loses none of them
   * (and may re-read records from before the query's start, which the upserts absorb).
   */
  private static void warnLegacyLatest(String stream, String shardId) {
    LOG.warn("Kinesis shard {} of stream '{}': the checkpoint says it started at LATEST and has"
        + " consumed nothing, but does not say when the query started (an offset written before"
        + " LATEST was fixed to a time). Reading it from TRIM_HORIZON, so that no record that"
        + " arrived after the query's start is skipped; records from before the start are read"
        + " too.", shardId, stream);
  }

  private static Long longOrNull(JsonNode node, String field) {
    JsonNode v = node.get(field);
    return v == null || v.isNull() ? null : v.asLong();
  }

  private static String textOrNull(JsonNode node, String field) {
    JsonNode v = node.get(field);
    return v == null || v.isNull() ? null : v.asText();
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof StreamOffset && toJson().equals(((StreamOffset) o).toJson());
  }

  @Override
  public int hashCode() {
    return toJson().hashCode();
  }

  @Override
  public String toString() {
    return toJson();
  }
}
