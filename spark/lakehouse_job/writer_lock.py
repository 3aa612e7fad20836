"""One writer per checkpoint and per warehouse: a second job on either exits at once.

Two queries on one checkpoint would commit the same offsets twice and race on the Hudi
tables (the copy-on-write tables and the quarantine have no concurrency control). The
lock is an exclusive flock on a file named after the checkpoint (and one after the
warehouse), held for the life of the process and released by the kernel however it ends
(kill -9 included), so a crashed job never leaves a stale lock. It guards one machine:
local mode, or one job container; two hosts writing one checkpoint are not detected.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import tempfile
from pathlib import Path
from typing import IO


class WriterLockError(RuntimeError):
    """Another job holds the checkpoint or the warehouse."""


class WriterLock:
    def __init__(self, resource: str, lock_dir: str | Path | None = None) -> None:
        self.resource = resource
        folder = Path(lock_dir or Path(tempfile.gettempdir()) / "lakehouse-job-locks")
        digest = hashlib.sha256(resource.encode()).hexdigest()[:16]
        self.path = folder / f"{digest}.lock"
        self._file: IO[str] | None = None

    def acquire(self) -> WriterLock:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        handle = self.path.open("a+")
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            holder = handle.read().strip() or "another process"
            handle.close()
            raise WriterLockError(
                f"{self.resource} is in use by {holder} (lock {self.path}): another job "
                "writes there; stop it first (`lakehouse down` stops the background one), "
                "or give this one its own --checkpoint and --warehouse"
            ) from None
        handle.seek(0)
        handle.truncate()
        handle.write(f"pid {os.getpid()}\n")
        handle.flush()
        self._file = handle
        return self

    def release(self) -> None:
        if self._file is not None:
            fcntl.flock(self._file, fcntl.LOCK_UN)
            self._file.close()
            self._file = None
