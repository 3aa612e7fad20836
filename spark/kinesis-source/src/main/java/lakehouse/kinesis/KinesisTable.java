package lakehouse.kinesis;

import java.util.EnumSet;
import java.util.Set;
import org.apache.spark.sql.connector.catalog.SupportsRead;
import org.apache.spark.sql.connector.catalog.TableCapability;
import org.apache.spark.sql.connector.read.Scan;
import org.apache.spark.sql.connector.read.ScanBuilder;
import org.apache.spark.sql.connector.read.streaming.MicroBatchStream;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/** Kinesis streams seen as a table that can only be read as a micro-batch stream. */
final class KinesisTable implements SupportsRead {
  private final KinesisOptions options;

  KinesisTable(KinesisOptions options) {
    this.options = options;
  }

  @Override
  public String name() {
    return "kinesis:" + options.streamName;
  }

  // Deprecated in Spark 3.5 in favour of columns(), whose default implementation calls this.
  @Override
  @SuppressWarnings("deprecation")
  public StructType schema() {
    return KinesisSchema.SCHEMA;
  }

  @Override
  public Set<TableCapability> capabilities() {
    return EnumSet.of(TableCapability.MICRO_BATCH_READ);
  }

  @Override
  public ScanBuilder newScanBuilder(CaseInsensitiveStringMap scanOptions) {
    KinesisOptions scanned = KinesisOptions.parse(scanOptions);
    return () -> new Scan() {
      @Override
      public StructType readSchema() {
        return KinesisSchema.SCHEMA;
      }

      @Override
      public String description() {
        return "KinesisScan[" + scanned.streamName + "]";
      }

      @Override
      public MicroBatchStream toMicroBatchStream(String checkpointLocation) {
        return new KinesisMicroBatchStream(scanned, checkpointLocation);
      }
    };
  }
}
