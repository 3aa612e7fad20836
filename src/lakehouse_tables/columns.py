"""Names of the columns the job adds to the declared ones, and the quarantine's columns."""

from typing import Final

# Added to every valid row (after the declared schema fields and the partition column).
OP: Final = "_op"  # c | u | d; 'u' when the event carries no op
IS_DELETED: Final = "_is_deleted"  # true for d; map to Hudi's delete marker at write time
INGEST_SHARD: Final = "_ingest_shard"  # Kinesis shardId
INGEST_SEQ: Final = "_ingest_seq"  # Kinesis sequenceNumber (decimal string)
# A user record's index in its KPL aggregate (which shares one sequence number); null for a
# plain record.
INGEST_SUBSEQ: Final = "_ingest_subseq"
ARRIVAL_TS: Final = "_arrival_ts"  # Kinesis approximateArrivalTimestamp
# Only in the raw copy: the record as it came off the stream (valid records are UTF-8).
RAW_PAYLOAD: Final = "_raw_payload"

# The quarantine table, in column order.
Q_RAW_PAYLOAD: Final = "raw_payload"
Q_REASON: Final = "reason"
Q_EVENT_TYPE: Final = "event_type"
Q_SHARD_ID: Final = "shard_id"
Q_SEQUENCE_NUMBER: Final = "sequence_number"
Q_ARRIVAL_TS: Final = "arrival_ts"
Q_QUARANTINED_AT: Final = "quarantined_at"
# The quarantine's partition column, added at write time (the arrival date).
Q_DATE: Final = "quarantine_date"

QUARANTINE_COLUMNS: Final[tuple[str, ...]] = (
    Q_RAW_PAYLOAD,
    Q_REASON,
    Q_EVENT_TYPE,
    Q_SHARD_ID,
    Q_SEQUENCE_NUMBER,
    Q_ARRIVAL_TS,
    Q_QUARANTINED_AT,
)
