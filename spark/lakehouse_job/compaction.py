"""Runs the Merge-on-Read compactions the writer schedules, off the write path.

Async compaction does not run from foreachBatch (apache/hudi#2043), and inline
compaction would stall ingestion; so the writer only schedules a plan every N
delta commits and this thread executes pending plans with Hudi's
`run_compaction` procedure. Writer and compactor coordinate through the table's
lock (hudi_options.concurrency_options): ZooKeeper's, which every writer of the table
shares, or Hudi's in-process one when there is no shared lock.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass

from pyspark.sql import SparkSession

from lakehouse_job.hudi_options import (
    SHARED_WITH_COMPACTOR,
    SinkSettings,
    compaction_options,
    table_path,
)
from lakehouse_job.hudi_timeline import has_commit, timeline_files
from lakehouse_job.status import StatusFile
from lakehouse_tables.declarations import TableSpec

log = logging.getLogger("lakehouse_job.compaction")
MAX_DELTA_COMMITS = "hoodie.compact.inline.max.delta.commits"
# Executes the pending plans only. Not "run": Hudi 0.15's procedure takes that for
# scheduleAndExecute, which would schedule a plan beside the writer's inflight delta commit
# (see compact_quiet_tables for what that breaks) and, while a plan is pending, generate an
# empty one every round ("No operations are retrieved").
EXECUTE_PENDING = "execute"


# table base path -> the table's compaction options (hudi_options.compaction_options)
Tables = Mapping[str, Mapping[str, str]]


@dataclass
class TableCompactions:
    """How one table's compactions went, as `lakehouse status` shows it."""

    runs: int = 0
    failures: int = 0
    consecutive_failures: int = 0
    last_error: str | None = None
    last_success_at: float | None = None


class CompactionRunner:
    """A daemon thread that compacts the given MoR tables every `interval_s` seconds.

    A failed compaction is retried the next round, counted and, with `status`, reported
    there after every round. `max_consecutive_failures` failures of one table in a row set
    `failed`: the job then stops and exits non-zero, because the read-optimized view (the
    only MoR view Trino reads) would otherwise freeze without anyone noticing.
    """

    def __init__(
        self,
        spark: SparkSession,
        tables: Callable[[], Tables],
        interval_s: float = 20.0,
        max_consecutive_failures: int = 10,
        status: StatusFile | None = None,
        last_writes: Callable[[], Mapping[str, float]] | None = None,
        clock: Callable[[], float] = time.monotonic,
        write_lock: threading.Lock | None = None,
        on_compaction: Callable[[str, int, int | None], None] | None = None,
    ) -> None:
        self.spark = spark
        # (table name, failures in a row: 0 when it succeeded, plans still pending: None
        # when Hudi could not say) after each round's compaction of a table (job metrics)
        self.on_compaction = on_compaction or (lambda _table, _failures, _pending: None)
        self.tables = tables
        self.interval_s = interval_s
        # table path -> clock() of its last write (the writer's); see compact_quiet_tables
        self.last_writes = last_writes or dict
        self.clock = clock
        self.write_lock = write_lock or threading.Lock()
        self._flushed: dict[str, float] = {}
        self.max_consecutive_failures = max_consecutive_failures
        self.status = status
        self.health: dict[str, TableCompactions] = {}
        self.failed: str | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="hudi-compaction", daemon=True)

    def start(self) -> CompactionRunner:
        self._share_settings()
        self._thread.start()
        return self

    def _share_settings(self) -> None:
        for key, value in SHARED_WITH_COMPACTOR.items():
            self.spark.conf.set(key, value)

    def stop(self, timeout_s: float = 120.0) -> None:
        """Let a compaction in flight finish (it holds the table lock), then stop."""
        self._stop.set()
        self._thread.join(timeout_s)

    def compact_now(self) -> None:
        for path, options in dict(self.tables()).items():
            self._compact(path, options)
        self._write_status()

    def compact_fully(self) -> None:
        """Schedule and run a compaction of everything not yet compacted (end of a run,
        so read-optimized views show the final state)."""
        for path, options in dict(self.tables()).items():
            self.compact_table_fully(path, options)

    def compact_table_fully(self, path: str, options: Mapping[str, str]) -> None:
        """One table's every delta commit folded into base files (also before the thread
        starts: lakehouse_job.table_widening reads a table's read-optimized view)."""
        self._share_settings()
        self.spark.conf.set(MAX_DELTA_COMMITS, "1")
        try:
            # First the plans left pending (by this run, or one that stopped before executing
            # them): scheduleAndExecute only executes the plan it schedules, and that plan
            # leaves out the file groups a pending one holds.
            self._call(EXECUTE_PENDING, path, options)
            self._call("scheduleAndExecute", path, options)
        finally:
            self.spark.conf.unset(MAX_DELTA_COMMITS)

    def compact_quiet_tables(self) -> None:
        """Fold every delta commit into base files of a table that nobody has written to for
        a whole interval. The writer schedules a plan only every N delta commits, so when
        ingest goes quiet the last few would otherwise stay out of the read-optimized view
        (the only MoR view Trino reads) until more data comes.

        Only while the writer holds no write in flight (its write lock, taken without
        waiting): a plan scheduled beside an inflight delta commit can fail that commit's
        conflict check, and the retry of a commit that created bucket file groups creates
        them again, so a bucket ends up with two file groups and every later write fails."""
        if not self.write_lock.acquire(blocking=False):
            return
        try:
            tables = dict(self.tables())
            for path, written in dict(self.last_writes()).items():
                quiet = self.clock() - written >= self.interval_s
                if not quiet or self._flushed.get(path, float("-inf")) >= written:
                    continue
                if path in tables and self._flush(path, tables[path]):
                    self._flushed[path] = written
        finally:
            self.write_lock.release()

    def _flush(self, path: str, options: Mapping[str, str]) -> bool:
        self.spark.conf.set(MAX_DELTA_COMMITS, "1")
        try:
            self._call("scheduleAndExecute", path, options)
            return True
        except Exception as exc:  # the next round tries again
            log.warning("compacting quiet table %s failed (will retry): %s", path, exc)
            return False
        finally:
            self.spark.conf.unset(MAX_DELTA_COMMITS)

    def _loop(self) -> None:
        while not self._stop.wait(self.interval_s):
            self.compact_now()
            self.compact_quiet_tables()

    def _call(self, op: str, path: str, options: Mapping[str, str]) -> None:
        pairs = ",".join(f"{k}={v}" for k, v in options.items())
        self.spark.sql(
            f"CALL run_compaction(op => '{op}', path => '{path}', options => '{pairs}')"
        ).collect()

    def _compact(self, path: str, options: Mapping[str, str]) -> None:
        health = self.health.setdefault(path, TableCompactions())
        table = path.rstrip("/").rsplit("/", 1)[-1]
        try:
            self._call(EXECUTE_PENDING, path, options)
        except Exception as exc:  # keep ingesting; the next round retries the plan
            health.failures += 1
            health.consecutive_failures += 1
            self.on_compaction(table, health.consecutive_failures, self._pending(path))
            health.last_error = str(exc).splitlines()[0][:500] if str(exc) else repr(exc)
            log.warning(
                "compaction of %s failed (%d in a row, %d in all; will retry): %s",
                path,
                health.consecutive_failures,
                health.failures,
                exc,
            )
            if health.consecutive_failures >= self.max_consecutive_failures:
                self.failed = (
                    f"compaction of {path} failed {health.consecutive_failures} times in a "
                    f"row (last: {health.last_error}); its read-optimized view is stale"
                )
                log.error("%s", self.failed)
            return
        health.runs += 1
        health.consecutive_failures = 0
        health.last_success_at = time.time()
        self.on_compaction(table, 0, self._pending(path))

    def _pending(self, path: str) -> int | None:
        """The table's compaction plans not yet completed (its backlog: what the
        read-optimized view is behind by), from Hudi's timeline; None when it cannot say."""
        try:
            plans = self.spark.sql(
                f"CALL show_compaction(path => '{path}', limit => 100)"
            ).collect()
        except Exception as exc:  # the next round asks again
            log.debug("could not read the compaction plans of %s: %s", path, exc)
            return None
        return sum(1 for plan in plans if plan["state"] != "COMPLETED")

    def _write_status(self) -> None:
        if self.status is not None:
            self.status.update(
                compaction={path: asdict(h) for path, h in self.health.items()},
                compaction_failed=self.failed,
            )


def existing_mor_tables(
    spark: SparkSession, specs: Mapping[str, TableSpec], sink: SinkSettings
) -> dict[str, dict[str, str]]:
    """Declared Merge-on-Read tables on storage with a commit (a table created by a run
    that died before its first commit has nothing to compact): path -> its compaction
    options."""
    found = {}
    for spec in specs.values():
        if "MERGE_ON_READ" in spec.table_types:
            path = table_path(sink, spec, "MERGE_ON_READ")
            if has_commit(timeline_files(spark, path) or []):
                found[path] = compaction_options(spec, sink)
    return found
