"""The streaming job classifies every shared record vector as listed (tests/vectors)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from pyspark.sql import SparkSession

from lakehouse_job import envelope
from lakehouse_job.parse import REASON, classify
from lakehouse_job.spark_schema import KINESIS_SCHEMA
from lakehouse_tables import rules
from tests.vectors import load_vectors, vector_specs

pytestmark = pytest.mark.unit


def test_job_classifies_every_vector_as_listed(spark: SparkSession) -> None:
    vectors = load_vectors()
    arrival = datetime(2026, 11, 22, 19, 0, tzinfo=UTC)
    # The sequence number is the vector's line, so each result names its vector.
    rows = [
        (bytearray(v.data), "events", "pk", "shard", str(v.line), arrival, None, None)
        for v in vectors
    ]
    # One action over the classified batch (a null reason is a valid row; test_job_parse
    # checks that valid_rows/quarantine_rows split it accordingly).
    classified = classify(spark.createDataFrame(rows, KINESIS_SCHEMA), vector_specs())
    reasons = {
        int(seq): reason for seq, reason in classified.select(envelope.SEQ, REASON).collect()
    }

    wrong = {}
    for v in vectors:
        reason = reasons[v.line]
        if v.valid and reason is not None:
            wrong[v.label] = reason
        elif not v.valid and (reason is None or str(v.reason_contains) not in reason):
            wrong[v.label] = reason or "valid"
        elif not v.valid and rules.ledger_kind(reason) != v.ledger_kind:
            # the reason <-> ledger kind map (lakehouse_tables.rules) agrees with the vector
            wrong[v.label] = f"{reason} -> {rules.ledger_kind(reason)}, not {v.ledger_kind}"
    assert wrong == {}
    assert len(reasons) == len(vectors) >= 40
