"""Debezium's change-event envelope, unwrapped into the flat record the record rules check.

An entry with `format: debezium` (tables.yaml) reads the JSON change events Debezium's
PostgreSQL connector writes, one stream per captured table:

    {"before": {...} | null, "after": {...} | null, "op": "c" | "u" | "d" | "r" | "t",
     "ts_ms": ..., "source": {"lsn": ..., "txId": ..., "ts_ms": ..., "table": ...}}

either as the whole record (JsonConverter with schemas.enable=false) or as the `payload`
beside a `schema` (schemas.enable=true). This module is the only place that knows that
shape: it turns each event into the flat JSON object the rest of the job validates,

    {"<op_field>": c|u|d, "<precombine>": source.lsn, "<partition_by.from>": source.ts_ms,
     ...the row's columns: `after`, or `before` for a delete}

so that the change's log position orders a key's versions (the newest change wins
whatever the arrival order, and a redelivered event ties with itself) and its commit time
dates it. A snapshot read (r) is an upsert (u). Tombstones (the empty or null record
Debezium may write after a delete, for Kafka's log compaction) carry nothing and are
skipped; everything else that is not a row change is quarantined with its reason (a
truncate is not applied: the job keeps the rows, see the record rules).

DataFrame expressions only: each event is parsed once more than a flat record is.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql.types import LongType, StringType, StructField, StructType

from lakehouse_tables import rules
from lakehouse_tables.declarations import TableSpec

# Objects are read as strings: from_json then gives their JSON text (re-rendered compactly),
# which is spliced into the flat record without knowing the table's columns.
_SOURCE: Final = StructType([StructField("lsn", LongType()), StructField("ts_ms", LongType())])
_EVENT_FIELDS: Final = [
    StructField("before", StringType()),
    StructField("after", StringType()),
    StructField("op", StringType()),
    StructField("source", _SOURCE),
]
# With the schema embedded, the event is `payload`; without, the whole record.
_OUTER: Final = StructType([StructField("payload", StringType()), *_EVENT_FIELDS])
_EVENT: Final = StructType(_EVENT_FIELDS)
_JSON_OPTIONS: Final = {"mode": "PERMISSIVE", "allowNonNumericNumbers": "false"}
# The commit time as rule 9 writes a timestamp, whatever the session time zone.
_TS_OPTIONS: Final = {"timestampFormat": "yyyy-MM-dd'T'HH:mm:ss.SSSXXX", "timeZone": "UTC"}

ROW_OPS: Final = ("c", "u", "d", "r")
TRUNCATE_OP: Final = "t"


def is_tombstone(size: Column, text: Column) -> Column:
    """No bytes, or the JSON null some sinks write for Kafka's null value."""
    return (F.coalesce(size, F.lit(0)) == 0) | F.coalesce(F.trim(text) == "null", F.lit(False))


def unwrap(
    text: Column, not_json: Column, route: Column, specs: Mapping[str, TableSpec]
) -> tuple[Column, Column]:
    """(flat record text, error) for the events of the debezium entries `route` names.

    `text` is the record's text, `not_json` true when it is not exactly one JSON object
    (record rule 4, checked by the caller), `route` the entry the record's stream maps to
    (null for other records, which get nulls). The error is a quarantine reason, null
    when the event unwrapped; the flat text is null then.
    """
    outer = F.from_json(text, _OUTER, _JSON_OPTIONS)
    wrapped = outer["op"].isNull() & outer["payload"].startswith("{")
    event = F.from_json(F.when(wrapped, outer["payload"]).otherwise(text), _EVENT, _JSON_OPTIONS)
    op, lsn, ts_ms = event["op"], event["source"]["lsn"], event["source"]["ts_ms"]
    row = F.when(op == rules.DELETE_OP, event["before"]).otherwise(event["after"])
    row_side = F.when(op == rules.DELETE_OP, F.lit("before")).otherwise(F.lit("after"))

    def reason(why: str) -> Column:
        return F.lit(f"{rules.NOT_DEBEZIUM_REASON}: {why}")

    error = (
        F.when(not_json | outer.isNull() | event.isNull(), reason("not one JSON object"))
        .when(op.isNull(), reason("no op (a Debezium JSON change event has payload.op)"))
        .when(op == TRUNCATE_OP, F.lit(rules.DEBEZIUM_TRUNCATE_REASON))
        .when(~op.isin(*ROW_OPS), F.concat(reason("op '"), F.substring(op, 1, 16), F.lit("'")))
        .when(lsn.isNull(), reason("no source.lsn (only PostgreSQL's connector is read)"))
        .when(ts_ms.isNull(), reason("no source.ts_ms"))
        .when(
            ~F.coalesce(row.startswith("{"), F.lit(False)),
            F.concat(reason("op '"), op, F.lit("' without an object in "), row_side),
        )
        .when(
            row.contains(rules.DEBEZIUM_UNAVAILABLE_PLACEHOLDER),
            F.lit(rules.DEBEZIUM_UNAVAILABLE_REASON),
        )
    )
    flat = F.lit(None).cast(StringType())
    for name, spec in specs.items():
        if spec.format != "debezium" or spec.op_field is None:
            continue
        meta = F.to_json(
            F.struct(
                F.when(op == "r", F.lit(rules.DEFAULT_OP)).otherwise(op).alias(spec.op_field),
                lsn.alias(spec.precombine),
                F.timestamp_millis(ts_ms).alias(spec.partition_source),
            ),
            _TS_OPTIONS,
        )
        # '{meta}' + '{row}' -> '{meta,row}'; an empty row object adds nothing.
        spliced = F.when(row == "{}", meta).otherwise(
            F.concat(meta.substr(F.lit(1), F.length(meta) - 1), F.lit(","), row.substr(2, 1 << 30))
        )
        flat = F.when(route == name, spliced).otherwise(flat)
    mine = route.isNotNull()
    return F.when(mine & error.isNull(), flat), F.when(mine, error)
