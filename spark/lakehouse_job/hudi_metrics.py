"""Hudi's own metrics of each write, as Hudi computes them (HoodieMetrics).

With `hoodie.metrics.on`, Hudi records every commit's figures (commit.duration and
commit.totalRecordsWritten, deltacommit.totalBytesWritten, clean.duration, ...) in a
metrics registry per write client and hands each registry to a reporter; ours
(lakehouse.hudi.CommitMetricsReporter, spark/job-helpers) keeps the table's registries in the
driver's JVM, and the job reads them after each write, into the batch's metrics line and
the Prometheus series lakehouse_job_hudi_metric{table,metric}. Hudi's own
Prometheus reporter is not used: it listens on every interface, and the first write client
to close stops the server all tables share.
"""

from __future__ import annotations

from typing import Any, Protocol

REPORTER_CLASS = "lakehouse.hudi.CommitMetricsReporter"


def reporter_options() -> dict[str, str]:
    """Hudi write options that send a table's metrics to the job."""
    return {"hoodie.metrics.on": "true", "hoodie.metrics.reporter.class": REPORTER_CLASS}


class Reports(Protocol):
    def take(self, table: str) -> dict[str, int]:
        """Hudi's figures for `table` since the last take ({} if none)."""
        ...


class HudiReports:
    """Reports, taken from the reporter in the driver's JVM."""

    def __init__(self, jvm: Any) -> None:
        self._reporter = jvm.lakehouse.hudi.CommitMetricsReporter

    def take(self, table: str) -> dict[str, int]:
        return {str(name): int(value) for name, value in self._reporter.take(table).items()}
