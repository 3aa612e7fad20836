"""Crash points for fault tests: the job kills itself, driver and JVM with SIGKILL, at a
named moment, so a test can prove that a crash exactly there loses and duplicates nothing.

Armed by the environment; unset, every call here is a no-op:

    LAKEHOUSE_CRASH_POINTS  comma-separated point names (below)
    LAKEHOUSE_CRASH_STATE   a folder where each fired point leaves a file, so that it fires
                            once: the restarted job runs on to the next point

Points:

    before:WRITE, after:WRITE  around one sink write of a micro-batch; WRITE as named in the
                               batch metrics (hudi_orders_cow, hudi_orders_mor,
                               hudi_orders_json, quarantine)
    before-commit              every write of the micro-batch done, Spark's commit of it not
    after-rewrite:TABLE        a table with a widened column rewritten in the new types, the
                               metastore not yet changed (lakehouse_job.table_widening)
    during:TEXT                while some JVM thread runs a frame whose class.method contains
                               TEXT, e.g. during:HiveSyncTool.syncHoodieTable (hive sync),
                               during:RunCompactionProcedure.call (compaction); watched inside
                               the JVM by lakehouse.faults.CrashWatch (spark/job-helpers)
"""

from __future__ import annotations

import logging
import os
import re
import signal
import threading
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

from pyspark.sql import SparkSession

log = logging.getLogger(__name__)

POINTS_ENV = "LAKEHOUSE_CRASH_POINTS"
STATE_ENV = "LAKEHOUSE_CRASH_STATE"
DURING = "during:"
WATCH_INTERVAL_MS = 20  # hive sync and compaction run for a second or more


def fired_file(state_dir: Path, point: str) -> Path:
    return state_dir / (re.sub(r"[^A-Za-z0-9_.-]", "_", point) + ".fired")


def fired_points(state_dir: Path) -> set[str]:
    """The points that have fired (read by tests, too)."""
    if not state_dir.is_dir():
        return set()
    return {p.read_text() for p in state_dir.glob("*.fired")}


def _sigkill_self() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


class CrashPoints:
    def __init__(
        self,
        points: Iterable[str] = (),
        state_dir: Path | None = None,
        kill_self: Callable[[], None] = _sigkill_self,
    ) -> None:
        self.points = tuple(points)
        if self.points and state_dir is None:
            raise ValueError(
                f"{POINTS_ENV} is set but {STATE_ENV} is not: without a folder to record "
                "fired points in, every restart would crash again at the first one"
            )
        self.state_dir = state_dir
        self.kill_self = kill_self
        self.jvm_pid: int | None = None
        # Sink writes can run side by side (--parallel-writes above 1): without it, two
        # threads could each mark their point as fired before the first kill lands, and one
        # point would never crash.
        self._firing = threading.Lock()

    @classmethod
    def from_env(cls, env: Mapping[str, str] = os.environ) -> CrashPoints:
        points = [p.strip() for p in env.get(POINTS_ENV, "").split(",") if p.strip()]
        state = env.get(STATE_ENV)
        return cls(points, Path(state) if state else None)

    def _pending(self) -> list[str]:
        if not self.points:
            return []
        assert self.state_dir is not None
        done = fired_points(self.state_dir)
        return [p for p in self.points if p not in done]

    def attach(self, spark: SparkSession) -> None:
        """Know the JVM to kill, and arm the JVM-side watch for the pending during: points."""
        if not self.points:
            return
        assert self.state_dir is not None
        self.state_dir.mkdir(parents=True, exist_ok=True)
        jvm = spark.sparkContext._jvm
        assert jvm is not None  # a live session has its gateway
        self.jvm_pid = int(jvm.java.lang.ProcessHandle.current().pid())
        pending = self._pending()
        if pending:
            log.warning("crash points armed: %s", ", ".join(pending))
        during = [p for p in pending if p.startswith(DURING)]
        if during:
            gateway = spark.sparkContext._gateway
            assert gateway is not None
            texts = gateway.new_array(jvm.java.lang.String, len(during))
            files = gateway.new_array(jvm.java.lang.String, len(during))
            for i, point in enumerate(during):
                texts[i] = point[len(DURING) :]
                files[i] = str(fired_file(self.state_dir, point))
            jvm.lakehouse.faults.CrashWatch.start(texts, files, os.getpid(), WATCH_INTERVAL_MS)

    def reached(self, point: str) -> None:
        """Crash here if `point` is armed and has not fired yet."""
        if point not in self.points:
            return
        assert self.state_dir is not None
        marker = fired_file(self.state_dir, point)
        with self._firing:  # held until the kill: later threads wait here for it
            if marker.exists():
                return
            with open(marker, "w") as out:
                out.write(point)
                out.flush()
                os.fsync(out.fileno())
            log.warning("crash point %s: killing the JVM and the driver", point)
            if self.jvm_pid is not None:
                os.kill(self.jvm_pid, signal.SIGKILL)
            self.kill_self()
