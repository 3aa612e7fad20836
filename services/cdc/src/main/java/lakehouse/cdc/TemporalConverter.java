package lakehouse.cdc;

import io.debezium.spi.converter.CustomConverter;
import io.debezium.spi.converter.RelationalColumn;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.Locale;
import java.util.Properties;
import java.util.function.Function;
import org.apache.kafka.connect.data.SchemaBuilder;

/**
 * PostgreSQL's {@code date}, {@code timestamp} (without time zone) and {@code time} columns as
 * the text the job's record rules read, instead of Debezium's default numbers (days, micros
 * since the epoch), which a {@code date} or {@code timestamp} field of the tables file would
 * quarantine:
 *
 * <ul>
 *   <li>date: {@code 2026-11-28}
 *   <li>timestamp: {@code 2026-11-28T10:15:00.123456Z}, the wall-clock value read as UTC (the
 *       column has no zone; Debezium's own numbers read it so too)
 *   <li>time: {@code 10:15:00} or {@code 10:15:00.123456} (a {@code string} field)
 * </ul>
 *
 * <p>The values come as Java objects or, from a snapshot, as PostgreSQL's own text; both are
 * read. {@code timestamptz} stays Debezium's (already ISO text in UTC). A value these forms
 * cannot hold (PostgreSQL's {@code infinity}, a year past 9999, a BC date) is passed on as
 * its own text, which the job quarantines with the field's name. Registered by
 * CdcService.engineProperties ({@code converters=temporal}).
 */
public final class TemporalConverter implements CustomConverter<SchemaBuilder, RelationalColumn> {
  private static final DateTimeFormatter TIME = DateTimeFormatter.ofPattern("HH:mm:ss", Locale.ROOT);

  @Override
  public void configure(Properties props) {}

  @Override
  public void converterFor(RelationalColumn column, ConverterRegistration<SchemaBuilder> registration) {
    Function<Object, String> format =
        switch (column.typeName().toLowerCase(Locale.ROOT)) {
          case "date" -> TemporalConverter::date;
          case "timestamp" -> TemporalConverter::timestamp;
          case "time" -> TemporalConverter::time;
          default -> null;
        };
    if (format != null) {
      SchemaBuilder schema = SchemaBuilder.string();
      registration.register(
          column.isOptional() ? schema.optional() : schema, value -> value == null ? null : format.apply(value));
    }
  }

  static String date(Object value) {
    LocalDate date = null;
    if (value instanceof LocalDate d) {
      date = d;
    } else if (value instanceof java.sql.Date d) {
      date = d.toLocalDate();
    } else if (value instanceof LocalDateTime t) {
      date = t.toLocalDate();
    } else if (value instanceof Number days) {
      date = LocalDate.ofEpochDay(days.longValue());
    } else if (value instanceof String text) {
      date = parsed(text, LocalDate::parse);
    }
    return date == null || !inRange(date) ? value.toString() : date.toString();
  }

  static String timestamp(Object value) {
    LocalDateTime time = null;
    if (value instanceof LocalDateTime t) {
      time = t;
    } else if (value instanceof java.sql.Timestamp t) {
      time = t.toLocalDateTime();
    } else if (value instanceof Instant i) {
      time = LocalDateTime.ofInstant(i, ZoneOffset.UTC);
    } else if (value instanceof OffsetDateTime t) {
      time = t.withOffsetSameInstant(ZoneOffset.UTC).toLocalDateTime();
    } else if (value instanceof String text) {
      // PostgreSQL's own text, as the snapshot reads it: 2026-11-28 10:15:00.123456
      time = parsed(text.replace(' ', 'T'), LocalDateTime::parse);
    }
    if (time == null || !inRange(time.toLocalDate())) {
      return value.toString();
    }
    return time.toLocalDate() + "T" + clock(time.toLocalTime()) + "Z";
  }

  static String time(Object value) {
    LocalTime time = null;
    if (value instanceof LocalTime t) {
      time = t;
    } else if (value instanceof java.sql.Time t) {
      time = t.toLocalTime();
    } else if (value instanceof Duration d && !d.isNegative() && d.toDays() == 0) {
      time = LocalTime.ofNanoOfDay(d.toNanos());
    } else if (value instanceof String text) {
      time = parsed(text, LocalTime::parse);
    }
    return time == null ? value.toString() : clock(time);
  }

  /** HH:mm:ss, and the microseconds when there are any (PostgreSQL keeps no finer). */
  private static String clock(LocalTime time) {
    int micros = time.getNano() / 1000;
    return time.format(TIME) + (micros == 0 ? "" : String.format(Locale.ROOT, ".%06d", micros));
  }

  /** `text` parsed, or null when it is not in the ISO form (infinity, 24:00:00, BC, ...). */
  private static <T> T parsed(String text, Function<String, T> parse) {
    try {
      return parse.apply(text);
    } catch (DateTimeParseException notIso) {
      return null;
    }
  }

  private static boolean inRange(LocalDate date) {
    return date.getYear() >= 1 && date.getYear() <= 9999;
  }
}
