package lakehouse.cdc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.debezium.engine.ChangeEvent;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class IncrementalKeysTest {
  @TempDir Path dir;

  static String change(String op, long id, long lsn) {
    String row = "{\"id\":" + id + "}";
    return "{\"op\":\"" + op + "\",\"before\":" + ("d".equals(op) ? row : "null") + ",\"after\":"
        + ("d".equals(op) ? "null" : row) + ",\"source\":{\"lsn\":" + lsn + "}}";
  }

  static String key(long id) {
    return "{\"id\":" + id + "}";
  }

  @Test
  void theFoldKeepsEachKeysChangeWithTheHighestPosition() {
    IncrementalKeys.Fold fold = new IncrementalKeys.Fold();
    fold.add(key(1), change("c", 1, 10));
    fold.add(key(2), change("c", 2, 11));
    fold.add(key(2), change("d", 2, 12));
    fold.add(key(3), change("c", 3, 20));
    // A re-sent older change of key 3 (a replay) does not undo its later delete.
    fold.add(key(3), change("d", 3, 21));
    fold.add(key(3), change("c", 3, 20));
    // A snapshot's delete event with the key's columns only.
    fold.add(key(4), change("r", 4, 30));
    fold.add(key(4), "{\"op\":\"d\",\"before\":{\"id\":4},\"after\":null,\"source\":{\"lsn\":31}}");
    // Not an event, and a key put under its digest.
    fold.add(key(5), "not json");
    fold.add("ab12", change("c", 6, 40));

    assertEquals(Map.of(key(1), 10L), fold.live());
    assertEquals(1, fold.hashedKeys());
    assertEquals(31, fold.maxLsn());
  }

  static ChangeEvent<String, String> event(String stream, long id, long lsn) {
    String value = change("r", id, lsn);
    return new ChangeEvent<>() {
      public String key() { return IncrementalKeysTest.key(id); }
      public String value() { return value; }
      public String destination() { return stream; }
      public Integer partition() { return null; }
    };
  }

  IncrementalKeys keys(Map<String, List<String[]>> streams) {
    return new IncrementalKeys(
        dir,
        "p",
        (stream, record) -> {
          for (String[] r : streams.getOrDefault(stream, List.of())) {
            record.accept(r[0], r[1]);
          }
        });
  }

  @Test
  void rowsLiveBeforeAndNeitherSnapshottedNorChangedSinceAreDeleted() throws Exception {
    List<String[]> orders = new ArrayList<>();
    for (long id = 1; id <= 5; id++) {
      orders.add(new String[] {key(id), change("c", id, 100 + id)});
    }
    IncrementalKeys keys = keys(Map.of("p.public.orders", orders));
    keys.begin("public.orders");
    assertTrue(keys.tracking("p.public.orders"));
    assertFalse(keys.tracking("p.public.customers"));

    // The snapshot reads 1 and 3; 2 is deleted during it (a streamed delete); 6 is new.
    keys.record(List.of(event("p.public.orders", 1, 500), event("p.public.customers", 4, 500)));
    keys.record(List.of(event("p.public.orders", 2, 501), event("p.public.orders", 6, 502)));
    // A restart during the scan: the stream is folded again, the keys seen so far kept.
    IncrementalKeys restarted = keys(Map.of("p.public.orders", orders));
    restarted.begin("public.orders");
    restarted.record(List.of(event("p.public.orders", 3, 503)));

    List<ChangeEvent<String, String>> deletes =
        restarted.deletesForVanishedRows("public.orders", 600, 1_000);

    ObjectMapper json = new ObjectMapper();
    List<String> deleted = new ArrayList<>();
    for (ChangeEvent<String, String> delete : deletes) {
      JsonNode value = json.readTree(delete.value());
      assertEquals("p.public.orders", delete.destination());
      assertEquals("d", value.get("op").asText());
      assertEquals(600, value.at("/source/lsn").asLong());
      deleted.add(value.get("before").toString());
    }
    deleted.sort(null);
    assertEquals(List.of(key(4), key(5)), deleted);
    restarted.done("public.orders");
    assertFalse(Files.exists(restarted.fileOf("public.orders")));
  }

  @Test
  void aDeleteIsDatedAfterTheRowsLastChange() throws Exception {
    List<String[]> orders = List.<String[]>of(new String[] {key(1), change("u", 1, 900)});
    IncrementalKeys keys = keys(Map.of("p.public.orders", orders));
    keys.begin("public.orders");

    List<ChangeEvent<String, String>> deletes = keys.deletesForVanishedRows("public.orders", 600, 1_000);

    assertEquals(901, new ObjectMapper().readTree(deletes.get(0).value()).at("/source/lsn").asLong());
  }

  @Test
  void aTableNeverCapturedHasNothingToDelete() throws Exception {
    IncrementalKeys keys = keys(Map.of());
    keys.begin("public.items");
    keys.record(List.of(event("p.public.items", 1, 10)));
    assertEquals(List.of(), keys.deletesForVanishedRows("public.items", 10, 1_000));
  }

  @Test
  void keysTheLakeHeldAtAResetCountAsLiveThoughTheStreamLostThem() throws Exception {
    // The stream was recreated (a local engine restarted): it holds key 1 only. The reset
    // read keys 1, 2 and 3 from the lake's view, with their fields in another order.
    Files.writeString(
        dir.resolve(IncrementalKeys.LAKE_PREFIX + "public.lines"),
        "700\t{\"line\": 1, \"order\": 1}\n800\t{\"line\":2,\"order\":1}\n900\t{\"order\":1,\"line\":3}\n");
    IncrementalKeys keys =
        keys(Map.of("p.public.lines", List.<String[]>of(
            new String[] {"{\"order\":1,\"line\":1}", "{\"op\":\"c\",\"source\":{\"lsn\":10}}"})));

    assertEquals(900, keys.begin("public.lines"));
    // The snapshot finds (1,1) and (1,2), under Debezium's field order.
    ChangeEvent<String, String> one = event("p.public.lines", 0, 950);
    keys.record(List.of(
        withKey(one, "{\"order\":1,\"line\":1}"), withKey(one, "{\"order\":1,\"line\":2}")));

    List<ChangeEvent<String, String>> deletes = keys.deletesForVanishedRows("public.lines", 960, 1);
    assertEquals(1, deletes.size());
    assertEquals("{\"line\":3,\"order\":1}", deletes.get(0).key());
    keys.done("public.lines");
    assertFalse(Files.exists(dir.resolve(IncrementalKeys.LAKE_PREFIX + "public.lines")));
  }

  static ChangeEvent<String, String> withKey(ChangeEvent<String, String> event, String key) {
    return new ChangeEvent<>() {
      public String key() { return key; }
      public String value() { return event.value(); }
      public String destination() { return event.destination(); }
      public Integer partition() { return null; }
    };
  }
}
