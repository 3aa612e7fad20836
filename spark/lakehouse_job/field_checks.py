"""Second stage of classification: per event type, typed fields and the checks on them."""

from __future__ import annotations

from typing import Final

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql.types import (
    ArrayType,
    BooleanType,
    DataType,
    DecimalType,
    DoubleType,
    StringType,
    StructField,
    StructType,
)

from lakehouse_job import envelope
from lakehouse_job.envelope import CORRUPT, JSON_OPTIONS, Check
from lakehouse_job.spark_schema import spark_type
from lakehouse_job.timestamp_columns import (
    lenient_timestamp,
    parse_iso_date,
    strict_iso_timestamp,
    utc_date_string,
)
from lakehouse_tables import columns, rules
from lakehouse_tables import types as T
from lakehouse_tables.declarations import TableSpec

# from_json renders a non-string JSON value in a string field as its JSON text, so 42 and
# "42" look alike. Each probe re-reads the string fields with a type that converts one
# kind of non-string value and fails on every JSON string, only for records where some
# string field's text could be that kind: (name, text pattern, probe type).
_PROBES: Final[tuple[tuple[str, str, DataType], ...]] = (
    # Integers render as their digits, others as Java's Double.toString (1.0E-7), and
    # 1e400 as "Infinity", quotes included. Narrow enough that ids such as UUIDs that
    # start with a digit are not suspects (each suspect record costs one more parse).
    ("number", r'^-?[0-9][0-9.eE+-]*$|^"-?Infinity"$', DoubleType()),
    ("boolean", r"^(true|false)$", BooleanType()),
    # An empty struct, not a map: a map would fail the batch on duplicate nested keys.
    ("object", r"^\{", StructType([])),
    ("array", r"^\[", ArrayType(StringType())),
)


_READ_AS_TEXT: Final = (T.Primitive.STRING, T.Primitive.TIMESTAMP, T.Primitive.DATE)


def _parsed_type(t: T.FieldType) -> DataType:
    """The type from_json reads a declared field with: timestamps and dates as text (their
    own strict parsers follow), a decimal with the declared integer digits and every other
    digit after the point, so that a value with more places than declared is seen, not
    rounded; the rest as declared."""
    if t in (T.Primitive.TIMESTAMP, T.Primitive.DATE):
        return StringType()
    if isinstance(t, T.Decimal):
        return DecimalType(T.MAX_DECIMAL_PRECISION, T.MAX_DECIMAL_PRECISION - t.integer_digits)
    return spark_type(t)


class SpecColumns:
    """Column expressions for one event type over the envelope stage's columns.

    Internal column names carry the event type hex-encoded: event type names need not be
    identifiers, and the name must be derivable from the spec alone.
    """

    def __init__(self, spec: TableSpec) -> None:
        self.spec = spec
        suffix = spec.event_type.encode("utf-8").hex()
        self.fields_col = f"__fields_{suffix}"
        self.raw_col = f"__raw_{suffix}"
        # Types JSON cannot carry as-is (timestamps, dates) are read as strings and checked
        # here; the rest are parsed by from_json, which flags a value of the wrong JSON type.
        self._typed = [n for n, t in spec.schema.items() if t not in _READ_AS_TEXT]
        # Timestamps need no probe: no non-string JSON text matches the ISO pattern.
        self._strings = [n for n, t in spec.schema.items() if t == "string"]
        self.probe_cols = {name: f"__probe_{name}_{suffix}" for name, _, _ in _PROBES}
        # Each timestamp field parsed once per record (parsed_timestamps), then read by the
        # checks and the output, instead of parsing the text again in each (a JIT-heavy
        # drain's profile had 11 % of its samples in Spark's ISO timestamp parser).
        timestamps = [name for name, t in spec.schema.items() if t == "timestamp"]
        self.ts_cols = {name: f"__ts_{name}_{suffix}" for name in timestamps}
        self._lenient_ts_cols = {name: f"__lenient_ts_{name}_{suffix}" for name in timestamps}

    def is_mine(self) -> Column:
        return F.col(envelope.EVENT_TYPE) == self.spec.event_type

    def parsed(self) -> Column:
        """The record parsed by this spec's schema; only evaluated for its own event type."""
        fields = [StructField(name, _parsed_type(t)) for name, t in self.spec.schema.items()]
        if self.spec.op_field is not None:
            fields.append(StructField(self.spec.op_field, StringType()))
        fields.append(StructField(CORRUPT, StringType()))
        return F.when(
            self.is_mine(), F.from_json(F.col(envelope.TEXT), StructType(fields), JSON_OPTIONS)
        )

    def raw(self) -> Column | None:
        """Non-string fields re-read as text, only for records where one failed to parse.

        A null from `parsed` means absent, JSON null or wrong type; this tells them apart
        (get_json_object would not: it returns JSON null and the string "null" alike).
        None when every field is a string or timestamp, which cannot fail to parse.
        """
        if not self._typed:
            return None
        schema = StructType([StructField(name, StringType()) for name in self._typed])
        failed = F.col(f"{self.fields_col}.{CORRUPT}").isNotNull()
        return F.when(failed, F.from_json(F.col(envelope.TEXT), schema, JSON_OPTIONS))

    def probes(self) -> list[Column]:
        """String fields re-read by each probe type (aliased); empty without string fields."""
        if not self._strings:
            return []
        found = []
        for name, pattern, probe_type in _PROBES:
            suspect = F.lit(False)
            for field in self._strings:
                suspect = suspect | self._value(field).rlike(pattern)
            schema = StructType([StructField(f, probe_type) for f in self._strings])
            probe = F.from_json(F.col(envelope.TEXT), schema, JSON_OPTIONS)
            found.append(F.when(self.is_mine() & suspect, probe).alias(self.probe_cols[name]))
        return found

    def lenient_timestamps(self) -> list[Column]:
        """Each timestamp field as Spark parses it (aliased), over `parsed`'s column; then
        parsed_timestamps over these: two selects, so the text is parsed once."""
        return [
            lenient_timestamp(self._value(name)).alias(column)
            for name, column in self._lenient_ts_cols.items()
        ]

    def parsed_timestamps(self) -> list[Column]:
        """Each timestamp field's instant (aliased; null when absent or not strict ISO-8601),
        over lenient_timestamps' columns; the checks and the output read these."""
        return [
            strict_iso_timestamp(self._value(name), F.col(self._lenient_ts_cols[name])).alias(
                column
            )
            for name, column in self.ts_cols.items()
        ]

    def checks(self, global_max_bytes: int) -> list[Check]:
        """This event type's checks, in order; each is guarded by the event type."""
        spec = self.spec
        found: list[Check] = []
        if spec.max_record_bytes < global_max_bytes:
            found.append(
                (
                    F.col(envelope.SIZE) > spec.max_record_bytes,
                    F.lit(rules.too_large_reason(spec.max_record_bytes)),
                )
            )
        for key in spec.record_keys:  # each field of a key of several columns
            key_missing = ~self._present(key)
            if spec.schema[key] == "string":
                # Hudi's key generators reject empty keys, failing the whole commit.
                key_missing = key_missing | (self._value(key) == "")
            found.append((key_missing, F.lit(f"{rules.MISSING_KEY_REASON} {key}")))
        for name in dict.fromkeys([spec.precombine, spec.partition_source]):
            found.append((~self._present(name), F.lit(f"{rules.MISSING_TIME_REASON} {name}")))
        for name, type_name in spec.schema.items():
            if type_name == "timestamp":
                invalid = self._present(name) & self.timestamp(name).isNull()
                found.append((invalid, F.lit(f"{rules.INVALID_TIME_REASON} {name}")))
                if name in spec.event_time_fields:
                    lo, hi = spec.event_time_window
                    outside = ~F.unix_micros(self.timestamp(name)).between(lo, hi)
                    found.append((outside, F.lit(f"{rules.OUT_OF_WINDOW_REASON} {name}")))
            elif type_name == "string":
                wrong = F.lit(f"{rules.WRONG_TYPE_REASON} {name}: expected string")
                found.append((self._not_a_string(name), wrong))
            elif type_name == "date":
                invalid = self._present(name) & self.date(name).isNull()
                wrong = F.lit(f"{rules.WRONG_TYPE_REASON} {name}: expected date (yyyy-MM-dd)")
                found.append((invalid, wrong))
            elif name in self._typed:
                wrong = self._present(name) & self._value(name).isNull()
                expected = f"{rules.WRONG_TYPE_REASON} {name}: expected {type_name}"
                found.append((wrong, F.lit(expected)))
                if type_name == "double":
                    # Jackson turns 1e400 into Infinity; Trino and aggregates choke on it.
                    infinite = self._value(name).isin(float("inf"), float("-inf"))
                    found.append((infinite, F.lit(f"{rules.OUT_OF_RANGE_REASON} {name}")))
                if isinstance(type_name, T.Decimal):
                    # Read with more decimal places than declared (_parsed_type): a value
                    # the declared scale would round, or that rounding would overflow.
                    wide = self._value(name)
                    exact = wide.cast(DecimalType(type_name.precision, type_name.scale))
                    inexact = wide.isNotNull() & (exact.isNull() | (exact != wide))
                    reason = f"{rules.OUT_OF_RANGE_REASON} {name}: does not fit {type_name} exactly"
                    found.append((inexact, F.lit(reason)))
        if spec.op_field is not None:
            raw_op = self._value(spec.op_field)
            invalid_op = raw_op.isNotNull() & ~self._normalised_op().isin(*rules.OPS)
            found.append((invalid_op, envelope.quoted(rules.INVALID_OP_REASON, raw_op)))
        guard = self.is_mine()
        return [(guard & condition, reason) for condition, reason in found]

    def output(self) -> list[Column]:
        """Typed declared fields, the partition column and _op / _is_deleted."""
        spec = self.spec
        declared = [self._typed_value(name, t).alias(name) for name, t in spec.schema.items()]
        op = self._normalised_op()
        return [
            *declared,
            utc_date_string(self.timestamp(spec.partition_source)).alias(spec.partition_name),
            op.alias(columns.OP),
            (op == rules.DELETE_OP).alias(columns.IS_DELETED),
        ]

    def timestamp(self, name: str) -> Column:
        """A timestamp field's instant: parsed_timestamps' column."""
        return F.col(self.ts_cols[name])

    def date(self, name: str) -> Column:
        return parse_iso_date(self._value(name))

    def _typed_value(self, name: str, t: T.FieldType) -> Column:
        if t == "timestamp":
            return self.timestamp(name)
        if t == "date":
            return self.date(name)
        if isinstance(t, T.Decimal):
            return self._value(name).cast(DecimalType(t.precision, t.scale))
        return self._value(name)

    def _normalised_op(self) -> Column:
        if self.spec.op_field is None:
            return F.lit(rules.DEFAULT_OP)
        return F.coalesce(F.lower(F.trim(self._value(self.spec.op_field))), F.lit(rules.DEFAULT_OP))

    def _not_a_string(self, name: str) -> Column:
        not_string = F.lit(False)
        for probe, pattern, _ in _PROBES:
            converted = F.col(f"{self.probe_cols[probe]}.{name}").isNotNull()
            not_string = not_string | (self._value(name).rlike(pattern) & converted)
        return not_string

    def _value(self, name: str) -> Column:
        return F.col(f"{self.fields_col}.{name}")

    def _present(self, name: str) -> Column:
        """The field is in the record and not JSON null (whatever its JSON type)."""
        value = self._value(name).isNotNull()
        if name in self._typed:
            return value | F.col(f"{self.raw_col}.{name}").isNotNull()
        return value
