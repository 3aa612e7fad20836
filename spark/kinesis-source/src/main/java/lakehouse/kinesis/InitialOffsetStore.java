package lakehouse.kinesis;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.function.Supplier;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;

/**
 * Persists the query's initial offset in the source's checkpoint folder. Spark asks for
 * initialOffset() again when it replays the first batch after a crash; without this the listing
 * (and the start time a LATEST query is fixed to) could have moved, and the replayed range would
 * differ from the logged one.
 */
final class InitialOffsetStore {
  private final Path file;
  private final Configuration conf;

  InitialOffsetStore(String checkpointLocation, Configuration conf) {
    this.file = new Path(checkpointLocation, "kinesis-initial-offset.json");
    this.conf = conf;
  }

  SourceOffset loadOrCreate(Supplier<SourceOffset> create) {
    try {
      FileSystem fs = file.getFileSystem(conf);
      if (fs.exists(file)) {
        try (InputStream in = fs.open(file)) {
          ByteArrayOutputStream buf = new ByteArrayOutputStream();
          in.transferTo(buf);
          return SourceOffset.fromJson(buf.toString(StandardCharsets.UTF_8));
        }
      }
      SourceOffset initial = create.get();
      Path tmp = new Path(file.getParent(), "." + file.getName() + ".tmp");
      try (OutputStream out = fs.create(tmp, true)) {
        out.write(initial.toJson().getBytes(StandardCharsets.UTF_8));
      }
      if (!fs.rename(tmp, file)) {
        throw new IOException("Could not rename " + tmp + " to " + file);
      }
      return initial;
    } catch (IOException e) {
      throw new IllegalStateException("Cannot read or write " + file, e);
    }
  }
}
