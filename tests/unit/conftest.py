"""One local SparkSession for every unit test (starting the JVM dominates test time)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from lakehouse.local.job_launcher import QUICK_JIT


@pytest.fixture(scope="session")
def spark() -> Iterator[SparkSession]:
    session = (
        SparkSession.builder.master("local[1]")
        .appName("lakehouse-unit-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "1")
        .config("spark.default.parallelism", "1")
        # The job runs with UTC too; see lakehouse_job.parse.
        .config("spark.sql.session.timeZone", "UTC")
        # A JVM that lives a minute: C1 only (measured: 55 -> 37 CPU-s, the same time).
        .config("spark.driver.extraJavaOptions", QUICK_JIT)
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


UNIT_DIR = Path(__file__).parent


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """`make unit-test` selects `-m unit`: a test here without the marker would never run
    there (test_metastore_schema's six did not, until 2026-11-28)."""
    unmarked = sorted(
        {
            str(item.path.relative_to(UNIT_DIR.parent.parent))
            for item in items
            if UNIT_DIR in item.path.parents and item.get_closest_marker("unit") is None
        }
    )
    if unmarked:
        raise pytest.UsageError(
            f"unit tests without the unit marker (add `pytestmark = pytest.mark.unit`): "
            f"{', '.join(unmarked)}"
        )
