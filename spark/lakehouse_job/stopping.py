"""How the job stops: between two micro-batches when asked (SIGTERM, SIGINT, a failed
compaction), or at once when one trigger hangs (the watchdog, exit 4)."""

from __future__ import annotations

import logging
import os
import signal
import threading
import time
from collections.abc import Callable, Sequence

from pyspark.sql import SparkSession
from pyspark.sql.streaming import StreamingQuery, StreamingQueryListener

# The job's logger: its lines about stopping have always been logged under this name.
log = logging.getLogger("lakehouse_job")

# The watchdog's exit code: the supervisor restarts the job, which replays the batch.
EXIT_TRIGGER_HUNG = 4


class GracefulStop:
    """SIGTERM/SIGINT ask the query to stop after the micro-batch in flight."""

    def __init__(self) -> None:
        self.requested = False
        signal.signal(signal.SIGTERM, self._request)
        signal.signal(signal.SIGINT, self._request)

    def _request(self, signum: int, _frame: object) -> None:
        log.info("signal %s: stopping after the current micro-batch", signum)
        self.requested = True


class TriggerWatchdog:
    """Ends the process when one trigger (reading, planning or writing a micro-batch) runs
    longer than `timeout_s`: a hung metastore or Kinesis engine would otherwise hold the
    query for many minutes with nothing logged. The batch was not committed, so the
    restarted job replays it."""

    def __init__(self, timeout_s: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.timeout_s = timeout_s
        self.clock = clock
        self.active_since: float | None = None

    def overdue(self, trigger_active: bool) -> float | None:
        """Seconds the current trigger has run, when that is past the timeout."""
        if not trigger_active:
            self.active_since = None
            return None
        now = self.clock()
        if self.active_since is None:
            self.active_since = now
        running = now - self.active_since
        return running if running > self.timeout_s else None

    def check(self, trigger_active: bool) -> None:
        running = self.overdue(trigger_active)
        if running is not None:
            log.error(
                "a micro-batch has run %.0f s (--batch-timeout %.0f s): a dependency hangs; "
                "exiting 4 so that the job restarts and replays the batch",
                running,
                self.timeout_s,
            )
            logging.shutdown()
            # The query cannot be stopped while it hangs; the JVM follows.
            os._exit(EXIT_TRIGGER_HUNG)


def stop_between_batches(spark: SparkSession, query: StreamingQuery) -> None:
    """Stop `query` between two micro-batches, and soon: with the source's read gate closed
    (lakehouse.kinesis.ReadGate) a new batch gets no records, so once the batch in flight
    commits the query idles until its next trigger, and is stopped there. Without it, a
    backlog keeps one batch starting as the last commits, and the wait lasts until it is
    drained (minutes, past the supervisor's or `docker stop`'s grace)."""
    jvm = spark._jvm
    assert jvm is not None  # a live session's gateway
    jvm.lakehouse.kinesis.ReadGate.close()
    while query.status.get("isTriggerActive"):
        time.sleep(0.2)
    query.stop()


def detach_listeners(
    spark: SparkSession,
    listeners: Sequence[StreamingQueryListener],
    ended: threading.Event,
    timeout_s: float = 10,
) -> None:
    """Once the query's end has reached the Python listeners (`ended`; at most `timeout_s`),
    removes them. The driver's Python exits soon after, and an event still on its way to
    one then failed in the JVM with py4j stack traces in the log (ERROR
    StreamingQueryListenerBus at the end of every --available-now run), the last batch's
    progress line and lag lost with it."""
    if not ended.wait(timeout_s):
        log.warning("the query's end did not reach its listeners in %s s; removed", timeout_s)
    for listener in listeners:
        spark.streams.removeListener(listener)
