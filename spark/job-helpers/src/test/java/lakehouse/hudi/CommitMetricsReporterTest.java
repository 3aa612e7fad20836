package lakehouse.hudi;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.Map;
import java.util.Properties;
import org.apache.hudi.com.codahale.metrics.MetricRegistry;
import org.junit.jupiter.api.Test;

class CommitMetricsReporterTest {

  private static CommitMetricsReporter reporter(String table, MetricRegistry registry) {
    Properties props = new Properties();
    props.setProperty("hoodie.table.name", table);
    return new CommitMetricsReporter(props, registry);
  }

  @Test
  void aTableIsTakenOnceWithoutItsPrefix() {
    MetricRegistry registry = new MetricRegistry();
    reporter("t_cow", registry);
    registry.gauge("t_cow.commit.duration", () -> () -> 1234L);
    registry.gauge("t_cow.commit.totalRecordsWritten", () -> () -> 10_000);
    registry.gauge("t_cow.commit.name", () -> () -> "not a number");
    registry.counter("t_cow.clean.runs").inc(2);
    // Hudi's JVM-wide registries, added to whichever table reports first: not this table's.
    registry.counter("t_cow.HoodieWrapperFileSystem.create").inc(6);
    registry.gauge("t_cow.TimelineService.TOTAL_API_CALLS", () -> () -> 6L);

    assertEquals(
        Map.of("commit.duration", 1234L, "commit.totalRecordsWritten", 10_000L, "clean.runs", 2L),
        CommitMetricsReporter.take("t_cow"));
    assertEquals(Map.of(), CommitMetricsReporter.take("t_cow"));
  }

  @Test
  void figuresRegisteredAfterAClientReportedAreTaken() {
    MetricRegistry registry = new MetricRegistry();
    CommitMetricsReporter early = reporter("q", registry);
    registry.gauge("q.index.type", () -> () -> 4L);
    early.report();  // a client closed before the commit
    registry.gauge("q.commit.totalInsertRecordsWritten", () -> () -> 10L);

    assertEquals(Map.of("index.type", 4L, "commit.totalInsertRecordsWritten", 10L),
        CommitMetricsReporter.take("q"));
  }

  @Test
  void tablesAreKeptApartAndRegistriesSinceTheLastTakeAddUp() {
    MetricRegistry write = new MetricRegistry();
    reporter("a", write);
    write.gauge("a.deltacommit.duration", () -> () -> 5L);
    MetricRegistry compaction = new MetricRegistry();
    reporter("a", compaction);
    compaction.gauge("a.compaction.duration", () -> () -> 7L);
    MetricRegistry other = new MetricRegistry();
    reporter("b", other);
    other.gauge(".commit.duration", () -> () -> 9L);  // no metrics-name prefix configured

    assertEquals(Map.of("deltacommit.duration", 5L, "compaction.duration", 7L),
        CommitMetricsReporter.take("a"));
    assertEquals(Map.of("commit.duration", 9L), CommitMetricsReporter.take("b"));
  }
}
