"""The record rules' constants, written once for both implementations of the rules.

The streaming job applies the rules with Spark expressions (lakehouse_job.parse) and the
load generator's ledger in Python (loadgen.validation); both read their constants here.
The rules themselves are listed in tables.yaml's header.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

# --- Ops (rule 10) ----------------------------------------------------------------------
OPS: Final[tuple[str, ...]] = ("c", "u", "d")
# Events without an op are upserts: Hudi treats c and u alike, so u is the honest label.
DEFAULT_OP: Final = "u"
DELETE_OP: Final = "d"

# --- Equal event times ------------------------------------------------------------------
# Two events of one key with the same event time: the one later on the stream wins, i.e.
# the higher sequence number of its shard (Kinesis orders a shard, and a key's records share
# a shard when its partition key is the record key, as the load generator's are). Across
# shards there is no stream order: the higher shard id wins, deterministically. The job's
# dedupe applies this within a batch; across batches Hudi keeps the incoming record on
# equal ordering values, i.e. the later batch, the later position of a shard.


def stream_position(
    shard_id: str, sequence_number: str, sub_sequence: int | None = None
) -> tuple[str, int, str, int]:
    """A record's place for the tie rule above: sequence numbers are decimal strings of
    varying length, compared by length, then text (numerically, without a big int); the
    user records of one KPL aggregate share its sequence number and follow their index in
    it (None for a plain record, which sorts before index 0 as the job's null does)."""
    return (
        shard_id,
        len(sequence_number),
        sequence_number,
        -1 if sub_sequence is None else sub_sequence,
    )


# --- Timestamps (rule 9) ----------------------------------------------------------------
# Instants outside UTC years 0001..9999 are rejected: Spark would accept year 0000 or a
# UTC year 10000 reached through an offset, but Hive dates, Trino and Python cannot.
MIN_MICROS: Final = -62_135_596_800_000_000  # 0001-01-01T00:00:00Z
MAX_MICROS: Final = 253_402_300_799_999_999  # 9999-12-31T23:59:59.999999Z
MAX_OFFSET_MINUTES: Final = 18 * 60  # java.time.ZoneOffset's range

# --- JSON limits (rule 4): Jackson 2.15's default StreamReadConstraints -----------------
# The job finds trailing data by wrapping the text in brackets, one level more, hence 999.
MAX_DEPTH: Final = 999
MAX_NUMBER_DIGITS: Final = 1000

# --- Ledger kinds: how the ledger names the first rule a record breaks ------------------
VALID: Final = "valid"
EMPTY: Final = "empty"
OVERSIZE: Final = "oversize"
NOT_UTF8: Final = "not_utf8"
NOT_JSON: Final = "not_json"
UNKNOWN_EVENT_TYPE: Final = "unknown_event_type"
MISSING_KEY: Final = "missing_key"
MISSING_TIME: Final = "missing_time"
INVALID_TIME: Final = "invalid_time"
OUT_OF_WINDOW: Final = "out_of_window"
WRONG_TYPES: Final = "wrong_types"
INVALID_OP: Final = "invalid_op"
CORRUPT_AGGREGATE: Final = "corrupt_aggregate"
NOT_DEBEZIUM: Final = "not_debezium"
TRUNCATE: Final = "truncate"
UNAVAILABLE_VALUE: Final = "unavailable_value"

# --- Quarantine reasons: how the job names it (a prefix; details follow) ----------------
# Rule 0, before any other: a Kinesis record in KPL's aggregated format that cannot be read
# whole (the source's aggregateError: MD5 mismatch, truncated, invalid protobuf, ...).
CORRUPT_AGGREGATE_REASON: Final = "corrupt KPL aggregate"  # ...: <why> (raw_payload is base64)
EMPTY_REASON: Final = "empty record"
TOO_LARGE_REASON: Final = "record larger than"  # ... <n> bytes
NOT_UTF8_REASON: Final = "not UTF-8 (raw_payload is base64)"
NOT_OBJECT_REASON: Final = "not a JSON object"
NOT_JSON_REASON: Final = "not JSON"
TRAILING_REASON: Final = (
    f"not JSON: data after the object, or nested deeper than {MAX_DEPTH} levels"
)
DUPLICATE_KEY_REASON: Final = "duplicate key"  # ... '<name>'
# Rule 4d, for entries with format: debezium (lakehouse_job.debezium).
NOT_DEBEZIUM_REASON: Final = "not a Debezium change event"  # ...: <why>
DEBEZIUM_TRUNCATE_REASON: Final = (
    "Debezium truncate (op 't') not applied: the tables keep their rows; delete them "
    "with a backfill or a new table if the source table was emptied on purpose"
)
# What Debezium sends for a column it could not read (an unchanged TOAST value of a table
# without REPLICA IDENTITY FULL); the CDC service sets it (unavailable.value.placeholder).
DEBEZIUM_UNAVAILABLE_PLACEHOLDER: Final = "__debezium_unavailable_value"
DEBEZIUM_UNAVAILABLE_REASON: Final = (
    "Debezium sent a placeholder for a column it could not read (an unchanged TOAST value): "
    "not applied, it would overwrite the column; set REPLICA IDENTITY FULL on the table"
)
MISSING_EVENT_TYPE_REASON: Final = "missing event_type"
UNKNOWN_EVENT_TYPE_REASON: Final = "unknown event_type"  # ... '<name>'
MISSING_KEY_REASON: Final = "missing record key"  # ... <field>
MISSING_TIME_REASON: Final = "missing event time"  # ... <field>
INVALID_TIME_REASON: Final = "invalid timestamp in"  # ... <field>
OUT_OF_WINDOW_REASON: Final = "event time outside the window in"  # ... <field>
WRONG_TYPE_REASON: Final = "wrong type for"  # ... <field>: expected <type>
OUT_OF_RANGE_REASON: Final = "number out of range for"  # ... <field>
INVALID_OP_REASON: Final = "invalid op"  # ... '<value>'

# Reason prefix -> ledger kind, longest prefixes first where one extends another.
REASON_KINDS: Final[tuple[tuple[str, str], ...]] = (
    (CORRUPT_AGGREGATE_REASON, CORRUPT_AGGREGATE),
    (EMPTY_REASON, EMPTY),
    (TOO_LARGE_REASON, OVERSIZE),
    (NOT_UTF8_REASON, NOT_UTF8),
    (NOT_OBJECT_REASON, NOT_JSON),
    (NOT_JSON_REASON, NOT_JSON),
    (DUPLICATE_KEY_REASON, NOT_JSON),
    (NOT_DEBEZIUM_REASON, NOT_DEBEZIUM),
    (DEBEZIUM_TRUNCATE_REASON, TRUNCATE),
    (DEBEZIUM_UNAVAILABLE_REASON, UNAVAILABLE_VALUE),
    (MISSING_EVENT_TYPE_REASON, UNKNOWN_EVENT_TYPE),
    (UNKNOWN_EVENT_TYPE_REASON, UNKNOWN_EVENT_TYPE),
    (MISSING_KEY_REASON, MISSING_KEY),
    (MISSING_TIME_REASON, MISSING_TIME),
    (INVALID_TIME_REASON, INVALID_TIME),
    (OUT_OF_WINDOW_REASON, OUT_OF_WINDOW),
    (WRONG_TYPE_REASON, WRONG_TYPES),
    (OUT_OF_RANGE_REASON, WRONG_TYPES),
    (INVALID_OP_REASON, INVALID_OP),
)


def key_text(fields: tuple[str, ...] | list[str], values: Mapping[str, object]) -> str:
    """A row's record key as one string, the same for the ledger and the tables: a key of
    one field is its value; a key of several is Hudi's complex form, field:value joined by
    commas (what _hoodie_record_key holds for such a key)."""
    if len(fields) == 1:
        return str(values.get(fields[0]))
    return ",".join(f"{name}:{values.get(name)}" for name in fields)


def too_large_reason(max_record_bytes: int) -> str:
    return f"{TOO_LARGE_REASON} {max_record_bytes} bytes"


def ledger_kind(reason: str) -> str:
    """The ledger kind of a quarantine reason (ValueError for a reason the rules lack)."""
    for prefix, kind in REASON_KINDS:
        if reason.startswith(prefix):
            return kind
    raise ValueError(f"quarantine reason {reason!r} matches no record rule")
