"""Spark's own per-trigger timings, appended to the job's metrics file.

One line per micro-batch of each query, beside BatchWriter's lines, in the same shape
(batch_id, records, seconds, finished_at): `seconds` holds Spark's durationMs phases,
prefixed with the query name (e.g. `lakehouse.latestOffset`, the Kinesis read, and
`lakehouse.triggerExecution`, the whole trigger). `records` is the query's input rows
only for the query named `counting_query` (none for the foreachBatch job, whose
BatchWriter lines count records; the first table's query for Hudi's streaming sink,
where every query reads every record).
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from pyspark.sql.streaming import StreamingQueryListener


class ProgressLog(StreamingQueryListener):
    def __init__(self, metrics_file: str, counting_query: str | None = None) -> None:
        self.path = Path(metrics_file)
        self.counting_query = counting_query

    def onQueryStarted(self, event) -> None:
        pass

    def onQueryProgress(self, event) -> None:
        p = event.progress
        if not p.numInputRows:
            return
        prefix = p.name.split(":", 1)[-1]
        line = {
            "batch_id": p.batchId,
            "records": p.numInputRows if p.name == self.counting_query else 0,
            "seconds": {f"{prefix}.{k}": round(v / 1000, 3) for k, v in p.durationMs.items()},
            "finished_at": time.time(),
        }
        with self.path.open("a") as out:
            out.write(json.dumps(line, sort_keys=True) + "\n")

    def onQueryIdle(self, event) -> None:
        pass

    def onQueryTerminated(self, event) -> None:
        pass
