"""Collapse one micro-batch to one row per record key, before the Hudi upsert.

Hudi orders records across commits by the precombine field (DefaultHoodieRecordPayload);
inside one batch this picks the same winner up front, deterministically, so a delete and
an older update of the same key in one batch resolve exactly as they would across batches.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from lakehouse_job.plan_stages import per_session
from lakehouse_tables import columns
from lakehouse_tables.declarations import TableSpec

_WINNER = "__winner"


def dedupe(rows: DataFrame, spec: TableSpec) -> DataFrame:
    """One row per record key (its fields together): greatest precombine wins.

    Equal event times go to the later stream position (lakehouse_tables.rules, where the
    tie rule and its Python twin stream_position live, used by the ledger): the highest
    (_ingest_shard, _ingest_seq, _ingest_subseq), sequence numbers compared by length, then
    text, i.e. numerically without overflowing a long; user records of one KPL aggregate
    by their index in it.
    `rows` is valid_rows output (or any frame with the key, precombine and _ingest_*
    columns); the result has the same columns in the same order.

    This keys on the record key alone, like a Hudi global index: two events of one key
    on different event days are one record, whichever partition it ends up in.
    """
    key, winner = _dedupe_columns(spec, tuple(rows.columns))
    return rows.groupBy(key).agg(winner).select(f"{_WINNER}.*")


@per_session
def _dedupe_columns(spec: TableSpec, names: tuple[str, ...]) -> tuple[Column, Column]:
    """(the grouping key, the winning row) for rows with columns `names`."""
    payload = F.struct(*[F.col(name) for name in names])
    # max_by: the row of the greatest ordering, without comparing the rows themselves
    # (max over a struct holding them failed on map columns, which have no order).
    # Precombine and key are never null in valid rows; positions never repeat.
    ordering = F.struct(
        F.col(spec.precombine).alias("precombine"),
        F.col(columns.INGEST_SHARD).alias("shard"),
        F.length(F.col(columns.INGEST_SEQ)).alias("seq_length"),
        F.col(columns.INGEST_SEQ).alias("seq"),
        F.col(columns.INGEST_SUBSEQ).alias("subseq"),
    )
    keys = [F.col(name) for name in spec.record_keys]
    key = keys[0] if len(keys) == 1 else F.struct(*keys)  # a key of several columns
    return key.alias("__key"), F.max_by(payload, ordering).alias(_WINNER)
