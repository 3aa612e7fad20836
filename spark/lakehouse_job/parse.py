"""Split a Kinesis micro-batch into typed rows per event type and a quarantine.

Every input row ends up in exactly one output: the valid rows of its event type or the
quarantine, which says why. Only DataFrame expressions are used (no Python UDFs). Each
record's JSON is parsed twice on the happy path (event_type, then its declared schema)
and scanned twice more without conversion (field names, trailing data); records with
a wrong-typed field, or a string field whose text looks like another JSON type, are
parsed once or twice more to tell which.

What makes a record valid is the "Record rules" section of tables.yaml; the load
generator's ledger (loadgen.validation) implements the same rules in Python, and
tests/vectors/records.jsonl holds the cases both must classify alike.

The job must set spark.sql.session.timeZone=UTC. The transforms themselves do not depend
on it (zones come from the strings, partition days are computed from epoch seconds), but
timestamps are shown and written in the session zone everywhere else.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from lakehouse_job import envelope
from lakehouse_job.envelope import SpecItems
from lakehouse_job.field_checks import SpecColumns
from lakehouse_job.plan_stages import Stage, apply, per_session
from lakehouse_tables import columns
from lakehouse_tables.declarations import TableSpec

REASON = "__reason"


@dataclass(frozen=True)
class SplitBatch:
    """The outputs of one micro-batch. `classified` is their common parent: persist it
    before writing more than one output, or each write re-parses the batch."""

    classified: DataFrame
    valid: Mapping[str, DataFrame]  # event_type -> rows, in tables.yaml order
    raw: Mapping[str, DataFrame]  # event_type -> valid rows with their original payload
    quarantine: DataFrame


class _Outputs(Mapping[str, DataFrame]):
    """event_type -> an output frame, planned when first asked for: a batch that holds one
    of the declared types has the others' plans analysed for nothing otherwise."""

    def __init__(self, event_types: Iterable[str], plan: Callable[[str], DataFrame]) -> None:
        self._event_types = list(event_types)
        self._plan = plan
        self._planned: dict[str, DataFrame] = {}

    def __getitem__(self, event_type: str) -> DataFrame:
        if event_type not in self._event_types:
            raise KeyError(event_type)
        if event_type not in self._planned:
            self._planned[event_type] = self._plan(event_type)
        return self._planned[event_type]

    def __iter__(self) -> Iterator[str]:
        return iter(self._event_types)

    def __len__(self) -> int:
        return len(self._event_types)


def classify(batch: DataFrame, specs: Mapping[str, TableSpec]) -> DataFrame:
    """Parse and check every record; internal columns, read by valid_rows/quarantine_rows.

    `batch` has the Kinesis source schema (data, shardId, sequenceNumber,
    approximateArrivalTimestamp, ...). The reason column is null for valid rows; otherwise
    it holds the first failed check, in this order: empty record, too large, not UTF-8,
    not JSON / not a JSON object / trailing data / duplicate key, missing / unknown
    event_type, then for the record's type: too large for that table, missing record key,
    missing event time, invalid timestamp / wrong type per field in schema order, invalid
    op.
    """
    return apply(batch, classify_stages(tuple(specs.items())))


@per_session
def classify_stages(specs: SpecItems) -> tuple[Stage, ...]:
    """classify's stages (plan_stages: built once per session)."""
    global_max = max(spec.max_record_bytes for _, spec in specs)
    per_spec = [SpecColumns(spec) for _, spec in specs]
    raws = [raw.alias(sc.raw_col) for sc in per_spec if (raw := sc.raw()) is not None]
    probes = [probe for sc in per_spec for probe in sc.probes()]
    lenient = [ts for sc in per_spec for ts in sc.lenient_timestamps()]
    bound = [name for name, spec in specs if spec.stream is not None]
    checks = envelope.envelope_checks([name for name, _ in specs], global_max, bound)
    for sc in per_spec:
        checks.extend(sc.checks(global_max))
    return (
        *envelope.envelope_stages(global_max, specs),
        Stage(("*", *[sc.parsed().alias(sc.fields_col) for sc in per_spec])),
        Stage(("*", *raws, *probes, *lenient)),
        Stage(("*", *[ts for sc in per_spec for ts in sc.parsed_timestamps()])),
        Stage(("*", _optimizer_barrier(_first_reason(checks)).alias(REASON))),
    )


def valid_rows(classified: DataFrame, spec: TableSpec) -> DataFrame:
    """Valid rows of one event type, typed as spark_schema.valid_row_type(spec).

    `spec` must be one of the specs `classified` was built with.
    """
    return _valid_stage(spec, False)(classified)


def raw_rows(classified: DataFrame, spec: TableSpec) -> DataFrame:
    """valid_rows plus each record's original text, for the raw copy: keyed by its Kinesis
    shard and sequence number, it keeps what the producer sent, not only what the job
    made of it (valid records are UTF-8 by rule, so the text is the bytes)."""
    return _valid_stage(spec, True)(classified)


@per_session
def _valid_stage(spec: TableSpec, with_payload: bool) -> Stage:
    sc = SpecColumns(spec)
    payload = [F.col(envelope.PAYLOAD).alias(columns.RAW_PAYLOAD)] if with_payload else []
    return Stage(
        (
            *sc.output(),
            F.col(envelope.SHARD).alias(columns.INGEST_SHARD),
            F.col(envelope.SEQ).alias(columns.INGEST_SEQ),
            F.col(envelope.SUBSEQ).alias(columns.INGEST_SUBSEQ),
            F.col(envelope.ARRIVAL).alias(columns.ARRIVAL_TS),
            *payload,
        ),
        where=F.col(REASON).isNull() & sc.is_mine(),
    )


def quarantine_rows(classified: DataFrame) -> DataFrame:
    """Rejected rows, as spark_schema.QUARANTINE_SCHEMA.

    raw_payload is the record as text when it is valid UTF-8, else the base64 of its
    bytes (the reason then says so), so the payload is kept exactly and the column stays
    valid UTF-8 for Parquet/Trino.
    """
    return _quarantine_stage()(classified)


@per_session
def _quarantine_stage() -> Stage:
    return Stage(
        (
            F.col(envelope.PAYLOAD).alias(columns.Q_RAW_PAYLOAD),
            F.col(REASON).alias(columns.Q_REASON),
            F.col(envelope.EVENT_TYPE).alias(columns.Q_EVENT_TYPE),
            F.col(envelope.SHARD).alias(columns.Q_SHARD_ID),
            envelope.position().alias(columns.Q_SEQUENCE_NUMBER),
            F.col(envelope.ARRIVAL).alias(columns.Q_ARRIVAL_TS),
            F.current_timestamp().alias(columns.Q_QUARANTINED_AT),
        ),
        where=F.col(REASON).isNotNull(),
    )


def split_batch(batch: DataFrame, specs: Mapping[str, TableSpec]) -> SplitBatch:
    """classify + valid_rows and raw_rows for every event type + quarantine_rows."""
    classified = classify(batch, specs)
    return SplitBatch(
        classified=classified,
        valid=_Outputs(specs, lambda name: valid_rows(classified, specs[name])),
        raw=_Outputs(specs, lambda name: raw_rows(classified, specs[name])),
        quarantine=quarantine_rows(classified),
    )


def _optimizer_barrier(reason: Column) -> Column:
    """`reason`, unchanged, but marked nondeterministic.

    Filtering on the reason (valid_rows, quarantine_rows) would otherwise be pushed below
    the projections, inlining every from_json once per reference: 30x slower on an
    unpersisted batch. Spark never pushes a filter through a projection holding a
    nondeterministic expression. A partition id is never negative, so the value is
    untouched (not rand(): Spark 3.4+ folds comparisons of rand() with constants away).
    """
    return F.when(F.spark_partition_id() >= 0, reason)


def _first_reason(checks: list[envelope.Check]) -> Column:
    # CASE WHEN evaluates its conditions in order and stops at the first true one, so a
    # record gets one specific reason and later checks may assume earlier ones passed.
    condition, reason = checks[0]
    result = F.when(condition, reason)
    for condition, reason in checks[1:]:
        result = result.when(condition, reason)
    return result
