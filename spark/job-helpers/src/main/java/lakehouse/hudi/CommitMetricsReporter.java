package lakehouse.hudi;

import java.util.ArrayList;
import java.util.List;
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
 * <p>Hudi creates a reporter with each table's metrics registry (one per write client, as the
 * datasource writes: one per commit). The job's driver takes the table's figures after the
 * write returns (lakehouse_job.hudi_metrics) by reading every registry created for the table
 * since its last take, not from {@link #report()}: Hudi reports when a client closes, and a
 * write may close one client before its commit (seen with the quarantine table: the report
 * held the index lookup, the commit's figures came after it, into the same registry). Hudi's
 * own Prometheus reporter cannot serve here: it binds its port on every interface, and the
 * first client to close stops the server every table shares.
 *
 * <p>Hudi's bundle shades Dropwizard's metrics: the registry is its org.apache.hudi.com.codahale
 * copy. Switched on by {@code hoodie.metrics.on=true} and {@code hoodie.metrics.reporter.class}.
 */
public final class CommitMetricsReporter extends CustomizableMetricsReporter {

  /** Per table, the registries created since its last take, oldest first. */
  private static final Map<String, List<MetricRegistry>> REGISTRIES = new ConcurrentHashMap<>();
  /** A table nobody takes (Hudi's streaming sink in the benchmark) keeps only its newest. */
  static final int KEPT_PER_TABLE = 16;

  private final String table;

  public CommitMetricsReporter(Properties props, MetricRegistry registry) {
    super(props, registry);
    this.table = props.getProperty("hoodie.table.name", "");
    REGISTRIES.compute(table, (name, found) -> {
      List<MetricRegistry> registries = found == null ? new ArrayList<>() : found;
      registries.add(registry);
      if (registries.size() > KEPT_PER_TABLE) {
        registries.remove(0);
      }
      return registries;
    });
  }

  @Override
  public void start() {}

  @Override
  public void report() {}

  @Override
  public void stop() {}

  /** Hudi's name without the table's prefix: "hudi_orders_cow.commit.duration" -> "commit.duration". */
  static String metricName(String table, String name) {
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

  /**
   * The figures of {@code table}'s registries created since the last take (a later registry's
   * value wins), and forget those registries: empty if none.
   */
  public static Map<String, Long> take(String table) {
    Map<String, Long> values = new TreeMap<>();
    // Removed whole: a client created from now on registers in a new list (compute and remove
    // of one key are atomic), so nobody else touches this one.
    List<MetricRegistry> registries = REGISTRIES.remove(table);
    for (MetricRegistry registry : registries == null ? List.<MetricRegistry>of() : registries) {
      registry.getGauges().forEach((name, gauge) -> {
        String metric = metricName(table, name);
        if (gauge.getValue() instanceof Number value && isTables(metric)) {
          values.put(metric, value.longValue());
        }
      });
      registry.getCounters().forEach((name, counter) -> {
        String metric = metricName(table, name);
        if (isTables(metric)) {
          values.put(metric, counter.getCount());
        }
      });
    }
    return values;
  }
}
