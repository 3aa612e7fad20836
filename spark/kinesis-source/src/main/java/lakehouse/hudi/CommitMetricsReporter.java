package lakehouse.hudi;

import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.hudi.com.codahale.metrics.MetricRegistry;
import org.apache.hudi.metrics.custom.CustomizableMetricsReporter;

/**
 * Hudi's own metrics of each write (HoodieMetrics: commit.duration, commit.totalRecordsWritten,
 * deltacommit.totalBytesWritten, clean.duration, ...), kept for the job's Prometheus endpoint.
 *
 * <p>Hudi creates a reporter with each table's metrics when a write client starts and calls
 * {@link #report()} when the client closes: with the datasource's writes, once per commit,
 * holding that commit's values. Hudi's own Prometheus reporter cannot serve here: it binds its
 * port on every interface, and the first client to close stops the server every table shares.
 * This one only keeps each table's last report; the job's driver takes it after the write
 * (lakehouse_job.hudi_metrics) and serves it beside its own series.
 *
 * <p>Hudi's bundle shades Dropwizard's metrics: the registry is its org.apache.hudi.com.codahale
 * copy. Switched on by {@code hoodie.metrics.on=true} and {@code hoodie.metrics.reporter.class}.
 */
public final class CommitMetricsReporter extends CustomizableMetricsReporter {

  private static final Map<String, Map<String, Long>> REPORTED = new ConcurrentHashMap<>();

  private final String table;

  public CommitMetricsReporter(Properties props, MetricRegistry registry) {
    super(props, registry);
    this.table = props.getProperty("hoodie.table.name", "");
  }

  @Override
  public void start() {}

  @Override
  public void report() {
    Map<String, Long> values = new TreeMap<>();
    getRegistry().getGauges().forEach((name, gauge) -> {
      if (gauge.getValue() instanceof Number value && isTables(metricName(name))) {
        values.put(metricName(name), value.longValue());
      }
    });
    getRegistry().getCounters().forEach((name, counter) -> {
      if (isTables(metricName(name))) {
        values.put(metricName(name), counter.getCount());
      }
    });
    if (!values.isEmpty()) {
      // A report before the last was taken (a compaction's client closing beside a write)
      // adds to it rather than replacing it.
      REPORTED.merge(table, values, (old, fresh) -> {
        Map<String, Long> merged = new TreeMap<>(old);
        merged.putAll(fresh);
        return merged;
      });
    }
  }

  @Override
  public void stop() {}

  /** Hudi's name without the table's prefix: "hudi_orders_cow.commit.duration" -> "commit.duration". */
  String metricName(String name) {
    String bare = name.startsWith(".") ? name.substring(1) : name;
    String prefix = table + ".";
    return !table.isEmpty() && bare.startsWith(prefix) ? bare.substring(prefix.length()) : bare;
  }

  /**
   * The write client's own figures are named by action, in lower case (commit.duration,
   * deltacommit.*, clean.*, finalize.*, index.*, lock.*). Hudi adds its JVM-wide registries at
   * each report, named by class (HoodieWrapperFileSystem.*, TimelineService.*) and emptied by
   * the first report that takes them: whichever table closes first would get every table's
   * file-system calls, so they are not a table's figures and are left out.
   */
  static boolean isTables(String metric) {
    return !metric.isEmpty() && !Character.isUpperCase(metric.charAt(0));
  }

  /** What was reported for {@code table} since the last take, and forget it: empty if nothing. */
  public static Map<String, Long> take(String table) {
    Map<String, Long> values = REPORTED.remove(table);
    return values == null ? Map.of() : values;
  }
}
