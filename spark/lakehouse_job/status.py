"""The job's status file: what `lakehouse status` shows beyond the processes.

Sections (compaction health, Kinesis lag) come from different threads; each update
rewrites the whole JSON atomically, so a reader never sees half a file.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pyspark.sql.streaming import StreamingQueryListener


class StatusFile:
    def __init__(self, path: str | Path | None) -> None:
        self.path = Path(path) if path else None
        self._sections: dict[str, Any] = {}
        self._lock = threading.Lock()

    def update(self, **sections: Any) -> None:
        with self._lock:
            self._sections.update(sections)
            if self.path is None:
                return
            self._sections["updated_at"] = time.time()
            temporary = self.path.with_suffix(".tmp")
            temporary.write_text(json.dumps(self._sections, indent=1, sort_keys=True))
            temporary.replace(self.path)


class LagListener(StreamingQueryListener):
    """Puts the Kinesis source's lag into the status file after each micro-batch, and
    hands it to `on_lag` (the job's Prometheus metrics). `terminated` is set once the
    query's end has reached it (and every listener added before it)."""

    def __init__(
        self, status: StatusFile, on_lag: Callable[[dict[str, Any]], None] | None = None
    ) -> None:
        self.status = status
        self.on_lag = on_lag
        self.terminated = threading.Event()

    def onQueryStarted(self, event: Any) -> None:
        pass

    def onQueryProgress(self, event: Any) -> None:
        lag = source_lag(json.loads(event.progress.json))
        if lag is not None:
            self.status.update(kinesis_lag=lag)
            if self.on_lag is not None:
                self.on_lag(lag)

    def onQueryIdle(self, event: Any) -> None:
        pass

    def onQueryTerminated(self, event: Any) -> None:
        self.terminated.set()


def source_lag(progress: dict[str, Any] | None) -> dict[str, Any] | None:
    """The Kinesis sources' lag from a query's last progress (their ReportsSourceMetrics):
    the largest of the streams', the shards behind in all of them, each shard's (ms, by
    stream and shard id), and the streams that do not exist (read on their own once
    they do)."""
    if not progress:
        return None
    reported = [
        source.get("metrics") or {}
        for source in progress.get("sources", [])
        if "maxMillisBehindLatest" in (source.get("metrics") or {})
    ]
    if not reported:
        return None
    missing = sorted(
        {name for m in reported for name in (m.get("missingStreams") or "").split(",") if name}
    )
    return {
        "batch_id": progress.get("batchId"),
        "max_millis_behind_latest": max(int(m["maxMillisBehindLatest"]) for m in reported),
        "shards_with_lag": sum(int(m.get("shardsWithLag", 0)) for m in reported),
        "millis_behind_latest_by_shard": {
            stream: shards
            for m in reported
            for stream, shards in json.loads(m.get("millisBehindLatestByShard") or "{}").items()
        },
        "missing_streams": missing,
    }
