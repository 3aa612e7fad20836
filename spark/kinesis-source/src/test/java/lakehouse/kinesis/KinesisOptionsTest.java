package lakehouse.kinesis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;

class KinesisOptionsTest {

  @Test
  void streamNameIsRequiredAndNamedInTheError() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> KinesisOptions.parse(Map.of("endpointUrl", "http://127.0.0.1:4566")));
    assertTrue(e.getMessage().contains("streamName"), e.getMessage());
  }

  @Test
  void defaults() {
    KinesisOptions o = KinesisOptions.parse(Map.of("streamName", "s"));
    assertEquals("us-east-1", o.region);
    assertNull(o.accessKeyId, "no endpoint: the default credential chain");
    assertEquals(KinesisOptions.StartingPosition.TRIM_HORIZON, o.startingPosition);
    assertEquals(10_000, o.maxRecordsPerCall);
    assertEquals(200, o.minCallIntervalMs);
    assertEquals(OptionalLong.empty(), o.maxRecordsPerTrigger());
    assertEquals(3_000, o.atTimestampTimeoutMs);
  }

  @Test
  void endpointImpliesTestCredentialsAndKeysAreCaseInsensitive() {
    KinesisOptions o = KinesisOptions.parse(Map.of("STREAMNAME", "s", "endpointurl",
        "http://127.0.0.1:4566", "startingposition", "latest", "MaxRecordsPerTrigger", "7"));
    assertEquals("test", o.accessKeyId);
    assertEquals("test", o.secretKey);
    assertEquals(KinesisOptions.StartingPosition.LATEST, o.startingPosition);
    assertEquals(OptionalLong.of(7), o.maxRecordsPerTrigger());
  }

  @Test
  void badValuesNameTheOption() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> KinesisOptions.parse(Map.of("streamName", "s", "maxRecordsPerCall", "20000")));
    assertTrue(e.getMessage().contains("maxRecordsPerCall"), e.getMessage());
    e = assertThrows(IllegalArgumentException.class,
        () -> KinesisOptions.parse(Map.of("streamName", "s", "startingPosition", "EARLIEST")));
    assertTrue(e.getMessage().contains("startingPosition"), e.getMessage());
    e = assertThrows(IllegalArgumentException.class,
        () -> KinesisOptions.parse(Map.of("streamName", "s", "awsAccessKeyId", "x")));
    assertTrue(e.getMessage().contains("awsSecretKey"), e.getMessage());
  }
}
