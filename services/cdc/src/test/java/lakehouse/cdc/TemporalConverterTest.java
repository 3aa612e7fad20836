package lakehouse.cdc;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import org.junit.jupiter.api.Test;

class TemporalConverterTest {
  @Test
  void datesAreIsoDatesFromEveryFormDebeziumGives() {
    assertEquals("2026-11-28", TemporalConverter.date(LocalDate.of(2026, 11, 28)));
    assertEquals("2026-11-28", TemporalConverter.date(java.sql.Date.valueOf("2026-11-28")));
    assertEquals("1970-01-02", TemporalConverter.date(1));
    assertEquals("2026-11-28", TemporalConverter.date("2026-11-28"));
    // What the job must quarantine stays recognisable.
    assertEquals("+10000-01-01", TemporalConverter.date(LocalDate.of(10000, 1, 1)));
    assertEquals("infinity", TemporalConverter.date("infinity"));
  }

  @Test
  void timestampsWithoutZoneAreTheirWallClockInUtc() {
    assertEquals(
        "2026-11-28T10:15:00Z", TemporalConverter.timestamp(LocalDateTime.of(2026, 11, 28, 10, 15)));
    assertEquals(
        "2026-11-28T10:15:00.000123Z",
        TemporalConverter.timestamp(java.sql.Timestamp.valueOf("2026-11-28 10:15:00.000123")));
    assertEquals(
        "2026-11-28T10:15:00.500000Z",
        TemporalConverter.timestamp(Instant.parse("2026-11-28T10:15:00.5Z")));
    // A snapshot reads PostgreSQL's text.
    assertEquals(
        "2026-11-28T10:28:18.532776Z", TemporalConverter.timestamp("2026-11-28 10:28:18.532776"));
    assertEquals("2026-11-28T10:28:18Z", TemporalConverter.timestamp("2026-11-28 10:28:18"));
    assertEquals("0000-12-31T00:00", TemporalConverter.timestamp(LocalDateTime.of(0, 12, 31, 0, 0)));
    assertEquals("infinity", TemporalConverter.timestamp("infinity"));
    assertEquals("0044-03-15 12:00:00 BC", TemporalConverter.timestamp("0044-03-15 12:00:00 BC"));
  }

  @Test
  void timesAreClockText() {
    assertEquals("10:15:00", TemporalConverter.time(LocalTime.of(10, 15)));
    assertEquals("23:59:59.999999", TemporalConverter.time(LocalTime.parse("23:59:59.999999")));
    assertEquals("00:00:01", TemporalConverter.time(Duration.ofSeconds(1)));
    assertEquals("PT24H", TemporalConverter.time(Duration.ofHours(24)));
    assertEquals("10:15:00.500000", TemporalConverter.time("10:15:00.5"));
    assertEquals("24:00:00", TemporalConverter.time("24:00:00"));
  }
}
