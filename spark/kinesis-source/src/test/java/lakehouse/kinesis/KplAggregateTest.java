package lakehouse.kinesis;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.unsafe.types.UTF8String;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;

/** De-aggregation against records made by aws-kinesis-agg (resources/make_kpl_vectors.py). */
class KplAggregateTest {

  private static List<String[]> vectors() throws IOException {
    try (InputStream in = KplAggregateTest.class.getResourceAsStream("/kpl-vectors.tsv")) {
      String text = new String(in.readAllBytes(), StandardCharsets.UTF_8);
      List<String[]> out = new ArrayList<>();
      for (String line : text.split("\n")) {
        if (!line.isBlank()) {
          out.add(line.split("\t", -1));
        }
      }
      return out;
    }
  }

  @TestFactory
  List<DynamicTest> everyVectorDeaggregatesAsExpected() throws IOException {
    List<DynamicTest> tests = new ArrayList<>();
    for (String[] v : vectors()) {
      tests.add(DynamicTest.dynamicTest(v[0], () -> check(v[1], v[2])));
    }
    assertTrue(tests.size() >= 8, "the vector file lost lines");
    return tests;
  }

  private static void check(String dataB64, String expected) throws Exception {
    byte[] data = Base64.getDecoder().decode(dataB64);
    assertTrue(KplAggregate.isAggregate(data));
    if (expected.startsWith("error:")) {
      KplAggregate.CorruptAggregateException e = assertThrows(
          KplAggregate.CorruptAggregateException.class, () -> KplAggregate.deaggregate(data));
      String fragment = expected.substring("error:".length());
      assertTrue(e.getMessage().contains(fragment), e.getMessage() + " lacks " + fragment);
      return;
    }
    JsonNode want = new ObjectMapper().readTree(expected);
    List<KplAggregate.UserRecord> got = KplAggregate.deaggregate(data);
    assertEquals(want.size(), got.size());
    for (int i = 0; i < got.size(); i++) {
      JsonNode w = want.get(i);
      assertEquals(w.get(0).asText(), got.get(i).partitionKey, "partition key of " + i);
      assertEquals(w.get(1).isNull() ? null : w.get(1).asText(), got.get(i).explicitHashKey);
      assertArrayEquals(Base64.getDecoder().decode(w.get(2).asText()), got.get(i).data);
    }
  }

  @Test
  void plainRecordsAreNotAggregates() {
    assertFalse(KplAggregate.isAggregate("{\"a\":1}".getBytes(StandardCharsets.UTF_8)));
    assertFalse(KplAggregate.isAggregate(new byte[] {(byte) 0xF3, (byte) 0x89}));
    assertFalse(KplAggregate.isAggregate(new byte[0]));
  }

  @Test
  void anAggregateBecomesOneRowPerUserRecordAtItsOwnSubSequence() throws IOException {
    String[] many = vectors().stream().filter(v -> v[0].equals("many-shared-keys")).findFirst()
        .orElseThrow();
    KinesisRecord record = new KinesisRecord(Base64.getDecoder().decode(many[1]), "envelope-key",
        "4960", 1_000L);
    List<InternalRow> rows = KinesisSchema.toRows(record, UTF8String.fromString("s"),
        UTF8String.fromString("shard-0"));
    assertEquals(25, rows.size());
    for (int i = 0; i < rows.size(); i++) {
      InternalRow row = rows.get(i);
      assertEquals("{\"i\": " + i + "}", new String(row.getBinary(0), StandardCharsets.UTF_8));
      assertEquals("k" + (i % 3), row.getUTF8String(2).toString(), "its own partition key");
      assertEquals("4960", row.getUTF8String(4).toString(), "the aggregate's sequence number");
      assertEquals(i, row.getLong(6));
      assertTrue(row.isNullAt(7));
    }
  }

  @Test
  void aCorruptAggregateIsOneRowWithItsBytesAndReason() throws IOException {
    String[] bad = vectors().stream().filter(v -> v[0].equals("md5-mismatch")).findFirst()
        .orElseThrow();
    byte[] data = Base64.getDecoder().decode(bad[1]);
    List<InternalRow> rows = KinesisSchema.toRows(new KinesisRecord(data, "pk", "7", 0L),
        UTF8String.fromString("s"), UTF8String.fromString("shard-0"));
    assertEquals(1, rows.size());
    assertArrayEquals(data, rows.get(0).getBinary(0));
    assertTrue(rows.get(0).isNullAt(6));
    assertTrue(rows.get(0).getUTF8String(7).toString().contains("MD5 mismatch"));
    assertTrue(rows.get(0).isNullAt(5), "no arrival time known");
  }

  @Test
  void aPlainRecordIsOneRowWithoutSubSequence() {
    byte[] data = "{}".getBytes(StandardCharsets.UTF_8);
    List<InternalRow> rows = KinesisSchema.toRows(new KinesisRecord(data, "pk", "7", 2L),
        UTF8String.fromString("s"), UTF8String.fromString("shard-0"));
    assertEquals(1, rows.size());
    assertTrue(rows.get(0).isNullAt(6) && rows.get(0).isNullAt(7));
    assertEquals(2_000L, rows.get(0).getLong(5));
  }
}
