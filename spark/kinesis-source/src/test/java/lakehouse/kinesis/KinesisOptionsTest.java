package lakehouse.kinesis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
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
  void severalStreamsInTheirOrderEachWithItsOwnOptions() {
    KinesisOptions o = KinesisOptions.parse(Map.of("streamName", "cdc.public.orders, events",
        "endpointUrl", "http://127.0.0.1:4566", "maxRecordsPerShard", "7"));
    assertEquals(List.of("cdc.public.orders", "events"), o.streamNames);
    KinesisOptions one = o.forStream("events");
    assertEquals("events", one.streamName);
    assertEquals(List.of("events"), one.streamNames);
    assertEquals(7, one.maxRecordsPerShard);
    assertEquals("http://127.0.0.1:4566", one.endpointUrl);
  }

  @Test
  void aStreamListWithAGapOrARepeatIsRefused() {
    IllegalArgumentException gap = assertThrows(IllegalArgumentException.class,
        () -> KinesisOptions.parse(Map.of("streamName", "a,,b")));
    assertTrue(gap.getMessage().contains("empty name"), gap.getMessage());
    IllegalArgumentException twice = assertThrows(IllegalArgumentException.class,
        () -> KinesisOptions.parse(Map.of("streamName", "a,b,a")));
    assertTrue(twice.getMessage().contains("names stream 'a' twice"), twice.getMessage());
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
    assertTrue(o.readAhead);
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
  void anHttpsEndpointTakesCredentialsFromTheProviderChain() {
    KinesisOptions o = KinesisOptions.parse(Map.of("streamName", "s", "endpointUrl",
        "https://kinesis.example.test"));
    assertEquals(null, o.accessKeyId);
    assertEquals(null, o.secretKey);
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
    e = assertThrows(IllegalArgumentException.class,
        () -> KinesisOptions.parse(Map.of("streamName", "s", "readAhead", "yes")));
    assertTrue(e.getMessage().contains("readAhead"), e.getMessage());
    assertEquals(false,
        KinesisOptions.parse(Map.of("streamName", "s", "readAhead", " FALSE")).readAhead);
  }
}
