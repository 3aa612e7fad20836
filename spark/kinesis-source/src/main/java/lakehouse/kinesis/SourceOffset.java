package lakehouse.kinesis;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.Serializable;
import java.util.Collections;
import java.util.Iterator;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * The source's position in all its streams: one {@link StreamOffset} per stream. Immutable.
 *
 * <p>A source that reads one stream writes that stream's offset as it always has (version 1), so
 * checkpoints written before a source could read several streams resume unchanged. Several streams
 * are written as {@code {"version": 2, "streams": {name: <version 1 offset>}}}, sorted by name so
 * that equal positions give equal JSON. A stream that leaves the query's list keeps its position
 * here (it is not read), so that adding it back resumes where it stopped; a stream missing from
 * the offset is new to the query and is read from its trim horizon.
 */
public final class SourceOffset implements Serializable {
  private static final long serialVersionUID = 1L;
  private static final int VERSION = 2;
  private static final ObjectMapper JSON = new ObjectMapper();

  private final TreeMap<String, StreamOffset> streams;

  public SourceOffset(Map<String, StreamOffset> streams) {
    this.streams = new TreeMap<>(streams);
  }

  public static SourceOffset of(StreamOffset stream) {
    return new SourceOffset(Map.of(stream.streamName, stream));
  }

  public Map<String, StreamOffset> streams() {
    return Collections.unmodifiableMap(streams);
  }

  public Optional<StreamOffset> get(String streamName) {
    return Optional.ofNullable(streams.get(streamName));
  }

  /** A copy with this stream's position replaced (or added). */
  public SourceOffset with(StreamOffset stream) {
    TreeMap<String, StreamOffset> all = new TreeMap<>(streams);
    all.put(stream.streamName, stream);
    return new SourceOffset(all);
  }

  public String toJson() {
    if (streams.size() == 1) {
      return streams.firstEntry().getValue().toJson();
    }
    ObjectNode root = JSON.createObjectNode();
    root.put("version", VERSION);
    ObjectNode byName = root.putObject("streams");
    streams.forEach((name, stream) -> byName.set(name, stream.toJsonNode()));
    try {
      return JSON.writeValueAsString(root);
    } catch (Exception e) {
      throw new IllegalStateException("Cannot serialise Kinesis offset", e);
    }
  }

  public static SourceOffset fromJson(String json) {
    JsonNode root;
    try {
      root = JSON.readTree(json);
    } catch (Exception e) {
      throw new IllegalArgumentException("Not a Kinesis source offset: " + json, e);
    }
    if (root == null || !root.isObject() || root.path("version").asInt(-1) != VERSION) {
      StreamOffset one = StreamOffset.fromJson(json);
      if (one.streamName == null) {
        throw new IllegalArgumentException("Kinesis source offset without a stream name: " + json);
      }
      return of(one);
    }
    if (!root.path("streams").isObject()) {
      throw new IllegalArgumentException("Unsupported Kinesis source offset: " + json);
    }
    TreeMap<String, StreamOffset> all = new TreeMap<>();
    Iterator<Map.Entry<String, JsonNode>> it = root.get("streams").fields();
    while (it.hasNext()) {
      Map.Entry<String, JsonNode> e = it.next();
      StreamOffset stream = StreamOffset.fromJson(e.getValue().toString());
      if (!e.getKey().equals(stream.streamName)) {
        throw new IllegalArgumentException("Kinesis source offset: the entry '" + e.getKey()
            + "' holds the positions of stream '" + stream.streamName + "': " + json);
      }
      all.put(e.getKey(), stream);
    }
    return new SourceOffset(all);
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof SourceOffset && toJson().equals(((SourceOffset) o).toJson());
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
