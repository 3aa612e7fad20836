"""Column expressions built once per Spark session and reused by every batch
(lakehouse_job.plan_stages)."""

from __future__ import annotations

import pytest
from pyspark import SparkContext
from pyspark.sql import SparkSession

from lakehouse_job import plan_stages
from lakehouse_job.dedupe import dedupe
from lakehouse_job.parse import classify_stages, split_batch
from lakehouse_tables.declarations import TABLES_YAML, load_tables
from tests.unit.lakehouse_job.test_parse import kinesis_rows, order

pytestmark = pytest.mark.unit


class Context:
    """Stands for a SparkContext (weakly referenced, like one)."""


def test_built_once_per_session_and_arguments(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[tuple[int, str]] = []

    @plan_stages.per_session
    def build(n: int, name: str) -> list[str]:
        calls.append((n, name))
        return [name] * n

    first, second = Context(), Context()
    monkeypatch.setattr(SparkContext, "_active_spark_context", first)
    assert build(2, "a") is build(2, "a")
    build(3, "a")
    monkeypatch.setattr(SparkContext, "_active_spark_context", second)
    build(2, "a")  # a new session's JVM: built again
    assert calls == [(2, "a"), (3, "a"), (2, "a")]


def test_the_same_stages_split_each_batch_by_its_own_records(spark: SparkSession) -> None:
    specs = load_tables(TABLES_YAML)
    first = split_batch(kinesis_rows(spark, {1: order(1, amount=1.5)}), specs)
    second = split_batch(kinesis_rows(spark, {2: order(2, amount="text")}), specs)
    assert classify_stages(tuple(specs.items())) is classify_stages(tuple(specs.items()))
    orders = specs["orders"]
    assert [r.order_id for r in dedupe(first.valid["orders"], orders).collect()] == ["o-1"]
    assert first.quarantine.count() == 0
    assert second.valid["orders"].count() == 0
    (rejected,) = second.quarantine.collect()
    assert rejected.sequence_number == "2" and "wrong type for amount" in rejected.reason
    # The first batch's frames still read their own records.
    assert [r.order_id for r in first.valid["orders"].collect()] == ["o-1"]
