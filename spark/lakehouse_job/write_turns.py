"""Each write of a table in its turn: a ZooKeeper mutex per table, held by every writer
(the stream job, a backfill, a redrive) from a write's index lookup to its commit.

Why, beside Hudi's own lock (hudi_options.concurrency_options): Hudi 0.15's conflict
check compares the file groups two commits touched, and two writers' first inserts of
one key into a Bloom-indexed table create file groups of their own, so both commit and
the key is stored twice; in a bucket-indexed table the loser's files stay in the bucket
and fail later writes. Taking turns per write rules both out (docs/writers.md). Hudi's
lock still guards the table services, which run without a turn.

The mutex is Curator's (Spark's jars carry it, as Hudi's ZooKeeper lock provider uses),
reached through the driver's JVM. It is held by the JVM thread that took it: PySpark
pins each Python thread to one JVM thread, so a turn is released by the thread that
took it. A writer that dies in its turn frees it when its ZooKeeper session expires.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Any, Protocol

log = logging.getLogger(__name__)

# A turn that does not come within this long means a writer holds it far past any write
# (a hung JVM keeps its session alive): fail loudly rather than wait for ever.
DEFAULT_WAIT_S = 600.0


class Turns(Protocol):
    def turn(self, table: str) -> AbstractContextManager[float]: ...

    def close(self) -> None: ...


class TurnNotGiven(RuntimeError):
    """Another writer held a table's write turn past the wait."""


class WriteTurns:
    """`jvm`: the driver's py4j view (SparkSession._jvm); `folder`: the warehouse's lock
    folder (hudi_options.lock_folder)."""

    def __init__(
        self,
        jvm: Any,
        lock_url: str,
        folder: str,
        session_ms: int,
        wait_s: float = DEFAULT_WAIT_S,
    ) -> None:
        curator = jvm.org.apache.curator
        retry = curator.retry.ExponentialBackoffRetry(200, 10)
        self._client = curator.framework.CuratorFrameworkFactory.newClient(
            lock_url, session_ms, 15_000, retry
        )
        self._client.start()
        self._seconds = jvm.java.util.concurrent.TimeUnit.SECONDS
        if not self._client.blockUntilConnected(30, self._seconds):
            self._client.close()
            raise TurnNotGiven(f"ZooKeeper at {lock_url} did not answer in 30 s")
        self._mutex_class = curator.framework.recipes.locks.InterProcessMutex
        self._mutexes: dict[str, Any] = {}
        self.folder = folder.rstrip("/")
        self.wait_s = wait_s
        self.lock_url = lock_url

    @contextmanager
    def turn(self, table: str) -> Iterator[float]:
        """Hold `table`'s write turn; yields the seconds waited for it."""
        mutex = self._mutexes.get(table)
        if mutex is None:
            mutex = self._mutex_class(self._client, f"{self.folder}/{table}.write")
            self._mutexes[table] = mutex
        begun = time.monotonic()
        if not mutex.acquire(int(self.wait_s), self._seconds):
            raise TurnNotGiven(
                f"{table}: another writer has held its write turn for {self.wait_s:.0f} s "
                f"(ZooKeeper {self.lock_url}, {self.folder}/{table}.write)"
            )
        waited = time.monotonic() - begun
        if waited >= 1:
            log.info("%s: waited %.1f s for another writer's write", table, waited)
        try:
            yield waited
        finally:
            mutex.release()

    def close(self) -> None:
        self._client.close()


class NoTurns:
    """No shared lock (a table with one writing process): every turn at once."""

    @contextmanager
    def turn(self, table: str) -> Iterator[float]:
        yield 0.0

    def close(self) -> None:
        pass


def for_sink(jvm: Any, lock_url: str, folder: str, session_ms: int) -> Turns:
    """Turns shared through ZooKeeper when there is one, else none (one writing process)."""
    return WriteTurns(jvm, lock_url, folder, session_ms) if lock_url else NoTurns()
