package lakehouse.kinesis;

import java.util.Map;
import org.apache.spark.sql.connector.catalog.Table;
import org.apache.spark.sql.connector.catalog.TableProvider;
import org.apache.spark.sql.connector.expressions.Transform;
import org.apache.spark.sql.sources.DataSourceRegister;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/** Entry point: {@code spark.readStream.format("kinesis")}. */
public final class KinesisSourceProvider implements TableProvider, DataSourceRegister {

  @Override
  public String shortName() {
    return "kinesis";
  }

  @Override
  public StructType inferSchema(CaseInsensitiveStringMap options) {
    return KinesisSchema.SCHEMA;
  }

  @Override
  public Table getTable(StructType schema, Transform[] partitioning, Map<String, String> props) {
    // Parsing here makes a missing or bad option fail at load(), not when the query starts.
    return new KinesisTable(KinesisOptions.parse(props));
  }
}
