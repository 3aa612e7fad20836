"""First stage of classification: raw Kinesis bytes -> text, event_type, envelope checks.

Adds internal columns (prefixed "__") to the source rows; `parse` and `validate` read them.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Final

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import StringType, StructField, StructType

from lakehouse_job import debezium
from lakehouse_job.plan_stages import Stage, apply, per_session
from lakehouse_tables import rules
from lakehouse_tables.declarations import TableSpec

# The table declarations as a hashable key (event_type, spec) in declaration order, for
# the stages built once per session (plan_stages.per_session).
SpecItems = tuple[tuple[str, TableSpec], ...]

# A classification check: (condition, reason). The first true condition names the reason.
Check = tuple[Column, Column]

# Internal columns of the classified batch.
DATA: Final = "__data"
SHARD: Final = "__shard"
SEQ: Final = "__seq"
SUBSEQ: Final = "__subseq"
AGGREGATE_ERROR: Final = "__aggregate_error"
ARRIVAL: Final = "__arrival"
SIZE: Final = "__size"
UTF8: Final = "__utf8"
PAYLOAD: Final = "__payload"
TEXT: Final = "__text"
ENVELOPE: Final = "__envelope"
EVENT_TYPE: Final = "__event_type"
KEYS: Final = "__keys"
STREAM: Final = "__stream"
# The entry a record's stream is declared for (tables.yaml `stream`), else null.
ROUTE: Final = "__route"
DEBEZIUM_ERROR: Final = "__debezium_error"
# The columns before the Debezium stage, in order.
_ROUTED_COLUMNS: Final = (
    *(DATA, STREAM, SHARD, SEQ, SUBSEQ, AGGREGATE_ERROR, ARRIVAL, SIZE, UTF8),
    *(PAYLOAD, TEXT, ROUTE),
)

CORRUPT: Final = "__corrupt_record"

# Shared by every from_json in the job. PERMISSIVE + a corrupt-record column keeps the
# fields that did parse and flags the record, instead of failing the batch (FAILFAST) or
# silently nulling a bad field with no trace (PERMISSIVE alone). Spark's defaults accept
# 'single quotes' and "NaN" for doubles; neither is JSON, so both are turned off.
JSON_OPTIONS: Final[dict[str, str]] = {
    "mode": "PERMISSIVE",
    "columnNameOfCorruptRecord": CORRUPT,
    "allowSingleQuotes": "false",
    "allowNonNumericNumbers": "false",
}

# The bracket wrapping that finds trailing data adds a nesting level, and Jackson allows
# 1000, so rules.MAX_DEPTH (999) is the documented limit; both causes share the reason.

# Long free-form values are cut before they go into a reason string.
_MAX_QUOTED_CHARS: Final = 64

_ENVELOPE_SCHEMA: Final = StructType(
    [StructField("event_type", StringType()), StructField(CORRUPT, StringType())]
)


def with_envelope(
    batch: DataFrame, max_record_bytes: int, specs: Mapping[str, TableSpec] | None = None
) -> DataFrame:
    """Decode each record and read its event_type (or take its stream's entry).

    `max_record_bytes` is the largest limit of any table: bigger records are never
    parsed (they are quarantined whatever their type). Invalid UTF-8 is detected by a
    decode/encode round trip, which Java's decoder makes lossy exactly when the bytes
    are not UTF-8; such records keep their exact bytes, base64-encoded, as payload.
    A record on a stream that an entry of `specs` declares is that entry's; a
    `format: debezium` entry's events are unwrapped here into flat records
    (lakehouse_job.debezium), its tombstones dropped.
    """
    return apply(batch, envelope_stages(max_record_bytes, tuple((specs or {}).items())))


@per_session
def envelope_stages(max_record_bytes: int, specs: SpecItems) -> tuple[Stage, ...]:
    """with_envelope's stages (plan_stages: built once per session)."""
    data = F.col("data")
    decoded = F.decode(data, "UTF-8")
    source = Stage(
        (
            data.alias(DATA),
            F.col("stream").alias(STREAM),
            F.col("shardId").alias(SHARD),
            F.col("sequenceNumber").alias(SEQ),
            F.col("subSequenceNumber").alias(SUBSEQ),
            F.col("aggregateError").alias(AGGREGATE_ERROR),
            F.col("approximateArrivalTimestamp").alias(ARRIVAL),
            F.length(data).alias(SIZE),
            (F.encode(decoded, "UTF-8") == data).alias(UTF8),
        )
    )
    payload = (
        F.when(F.col(UTF8), F.decode(F.col(DATA), "UTF-8"))
        .otherwise(F.base64(F.col(DATA)))
        .alias(PAYLOAD)
    )
    parseable = F.col(UTF8) & (F.col(SIZE) > 0) & (F.col(SIZE) <= max_record_bytes)
    routed = ("*", F.when(parseable, F.col(PAYLOAD)).alias(TEXT), _route(specs).alias(ROUTE))
    envelope = F.from_json(F.col(TEXT), _ENVELOPE_SCHEMA, JSON_OPTIONS)
    # Top-level field names, duplicates included (from_json keeps one value silently).
    # Staged, not inlined: the duplicate check reads it twice.
    keys = F.json_object_keys(F.col(TEXT))
    event_type = F.coalesce(F.col(ROUTE), F.col(f"{ENVELOPE}.event_type"))
    return (
        source,
        Stage(("*", payload)),
        Stage(routed),
        *_unwrap_debezium(specs),
        Stage(("*", envelope.alias(ENVELOPE), keys.alias(KEYS))),
        Stage(("*", event_type.alias(EVENT_TYPE))),
    )


def _route(specs: SpecItems) -> Column:
    """The first entry (in declaration order) whose `stream` matches the record's."""
    route = F.lit(None).cast(StringType())
    for name, spec in reversed(specs):
        if spec.stream is not None:
            route = F.when(F.col(STREAM).rlike(_glob_regex(spec.stream)), F.lit(name)).otherwise(
                route
            )
    return route


def _glob_regex(pattern: str) -> str:
    # Stream names hold only [a-zA-Z0-9_.-] (declarations checks it): '.' is the one
    # character to escape.
    return "^" + pattern.replace(".", "\\.").replace("?", ".").replace("*", ".*") + "$"


def _unwrap_debezium(specs: SpecItems) -> tuple[Stage, ...]:
    """Debezium entries' events as flat records in TEXT (their original stays in PAYLOAD),
    with DEBEZIUM_ERROR saying why an event is not a row change; tombstones dropped."""
    names = [name for name, spec in specs if spec.format == "debezium"]
    if not names:
        return (Stage(("*", F.lit(None).cast(StringType()).alias(DEBEZIUM_ERROR))),)
    mine = F.coalesce(F.col(ROUTE).isin(*names), F.lit(False))
    text = F.col(TEXT)
    parsed = F.from_json(text, _ENVELOPE_SCHEMA, JSON_OPTIONS)
    not_json = parsed.isNull() | parsed[CORRUPT].isNotNull() | _trailing_data(text)
    flat, error = debezium.unwrap(text, not_json, F.when(mine, F.col(ROUTE)), dict(specs))
    return (
        Stage(
            (
                *[F.col(c) for c in _ROUTED_COLUMNS if c != TEXT],
                F.when(mine, flat).otherwise(text).alias(TEXT),
                error.alias(DEBEZIUM_ERROR),
            ),
            where=~(mine & debezium.is_tombstone(F.col(SIZE), F.col(TEXT))),
        ),
    )


def envelope_checks(
    event_types: Collection[str],
    max_record_bytes: int,
    stream_bound: Collection[str] = (),
) -> list[Check]:
    """Checks that need no table declaration, in the order they are applied.

    `stream_bound` names the entries read from their declared stream only: an
    event_type field naming one on another stream is unknown."""
    size = F.col(SIZE)
    text = F.col(TEXT)
    event_type = F.col(EVENT_TYPE)
    # from_json gives null for empty/blank text and sets the corrupt column for anything
    # that is not one JSON object. Valid JSON that is not an object gets its own reason.
    malformed = F.col(ENVELOPE).isNull() | F.col(f"{ENVELOPE}.{CORRUPT}").isNotNull()
    other_json_value = ~text.rlike(r"^\s*\{") & F.get_json_object(text, "$").isNotNull()
    return [
        (
            F.col(AGGREGATE_ERROR).isNotNull(),
            F.concat(
                F.lit(f"{rules.CORRUPT_AGGREGATE_REASON}: "),
                F.col(AGGREGATE_ERROR),
                F.lit(" (raw_payload is base64)"),
            ),
        ),
        (F.col(DATA).isNull() | (size == 0), F.lit(rules.EMPTY_REASON)),
        (size > max_record_bytes, F.lit(rules.too_large_reason(max_record_bytes))),
        (~F.col(UTF8), F.lit(rules.NOT_UTF8_REASON)),
        (F.col(DEBEZIUM_ERROR).isNotNull(), F.col(DEBEZIUM_ERROR)),
        (malformed & other_json_value, F.lit(rules.NOT_OBJECT_REASON)),
        (malformed, F.lit(rules.NOT_JSON_REASON)),
        (_trailing_data(text), F.lit(rules.TRAILING_REASON)),
        (F.size(F.col(KEYS)) != F.size(F.array_distinct(F.col(KEYS))), _duplicate_key_reason()),
        (event_type.isNull() | (event_type == ""), F.lit(rules.MISSING_EVENT_TYPE_REASON)),
        (~event_type.isin(*event_types), quoted(rules.UNKNOWN_EVENT_TYPE_REASON, event_type)),
        (
            F.col(ROUTE).isNull() & event_type.isin(*stream_bound),
            quoted(rules.UNKNOWN_EVENT_TYPE_REASON, event_type),
        ),
    ]


def _trailing_data(text: Column) -> Column:
    """Text after the first JSON value, which from_json never reads ('{"a":1} x').

    Wrapped in brackets, a clean record is an array of exactly one value, and anything
    after the object either breaks the array or adds elements, except data starting with
    ']', which closes the array early; appending a sentinel element catches that case.
    json_array_length gives null for invalid JSON (too deep included). Only evaluated for
    records that parsed, and the second scan only when the text holds a ']'.
    """
    once = F.json_array_length(F.concat(F.lit("["), text, F.lit("]")))
    sentinel = F.json_array_length(F.concat(F.lit("["), text, F.lit(",0]")))
    closes_early = text.contains("]") & ~F.coalesce(sentinel == 2, F.lit(False))
    return ~F.coalesce(once == 1, F.lit(False)) | closes_early


def _duplicate_key_reason() -> Column:
    # SQL text: the Python array_position takes only a literal value, not a lambda variable.
    first_repeated = F.expr(
        f"element_at(filter({KEYS}, (key, i) -> array_position({KEYS}, key) != i + 1), 1)"
    )
    return quoted(rules.DUPLICATE_KEY_REASON, first_repeated)


def quoted(prefix: str, value: Column) -> Column:
    """`prefix 'value'` with the value cut to a readable length."""
    return F.concat(F.lit(f"{prefix} '"), F.substring(value, 1, _MAX_QUOTED_CHARS), F.lit("'"))


def position() -> Column:
    """A record's place on its shard as text: the sequence number, and for a user record of
    a KPL aggregate (which shares it) "/" and its index, so each has its own quarantine key."""
    return F.when(F.col(SUBSEQ).isNull(), F.col(SEQ)).otherwise(
        F.concat(F.col(SEQ), F.lit("/"), F.col(SUBSEQ).cast("string"))
    )
