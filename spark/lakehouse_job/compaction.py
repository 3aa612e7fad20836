"""Runs the Merge-on-Read compactions the writer schedules, off the write path.

Async compaction does not run from foreachBatch (apache/hudi#2043), and inline
compaction would stall ingestion; so the writer only schedules a plan every N
delta commits and this thread executes pending plans with Hudi's
`run_compaction` procedure. Writer and compactor share one JVM and coordinate
through Hudi's in-process lock (see hudi_options).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping

from pyspark.sql import SparkSession

from lakehouse_job.hudi_options import SHARED_WITH_COMPACTOR

log = logging.getLogger("lakehouse_job.compaction")


# table base path -> the table's merge options (hudi_options.merge_options)
Tables = Mapping[str, Mapping[str, str]]


class CompactionRunner:
    """A daemon thread that compacts the given MoR tables every `interval_s` seconds."""

    def __init__(
        self, spark: SparkSession, tables: Callable[[], Tables], interval_s: float = 20.0
    ) -> None:
        self.spark = spark
        self.tables = tables
        self.interval_s = interval_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="hudi-compaction", daemon=True)

    def start(self) -> CompactionRunner:
        for key, value in SHARED_WITH_COMPACTOR.items():
            self.spark.conf.set(key, value)
        self._thread.start()
        return self

    def stop(self, timeout_s: float = 120.0) -> None:
        """Let a compaction in flight finish (it holds the table lock), then stop."""
        self._stop.set()
        self._thread.join(timeout_s)

    def compact_now(self) -> None:
        for path, options in dict(self.tables()).items():
            self._compact(path, options)

    def compact_fully(self) -> None:
        """Schedule and run a compaction of everything not yet compacted (end of a run,
        so read-optimized views show the final state)."""
        self.spark.conf.set("hoodie.compact.inline.max.delta.commits", "1")
        for path, options in dict(self.tables()).items():
            self._call("scheduleAndExecute", path, options)

    def _loop(self) -> None:
        while not self._stop.wait(self.interval_s):
            self.compact_now()

    def _call(self, op: str, path: str, options: Mapping[str, str]) -> None:
        pairs = ",".join(f"{k}={v}" for k, v in options.items())
        self.spark.sql(
            f"CALL run_compaction(op => '{op}', path => '{path}', options => '{pairs}')"
        ).collect()

    def _compact(self, path: str, options: Mapping[str, str]) -> None:
        try:
            self._call("run", path, options)
        except Exception as exc:  # keep ingesting; the next round retries the plan
            log.warning("compaction of %s failed (will retry): %s", path, exc)
