"""Create the Trino views and raw JSON tables users query (lakehouse_tables.query_views).

Trino checks a view's query when it is created, so a view can only be made once its
Hudi table exists, that is after the job's first commit to it and its hive sync. The
job's main loop calls `poll()` every second; an attempt runs in a background thread at
most every `interval_s` until every object exists, then never again. Trino being down
delays the views and never the job: failures are logged and retried.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping

from lakehouse.clients import Endpoints, trino_connection
from lakehouse_job.hudi_options import SinkSettings
from lakehouse_job.sinks import raw_json_path
from lakehouse_tables.declarations import TableSpec
from lakehouse_tables.query_views import QueryObject, json_table, live_view

log = logging.getLogger("lakehouse_job.query_views")
Execute = Callable[[str], None]


def query_objects(specs: Mapping[str, TableSpec], sink: SinkSettings) -> list[QueryObject]:
    objects = []
    for spec in specs.values():
        objects.append(live_view(spec, sink.database))
        objects.append(json_table(spec, sink.database, raw_json_path(sink, spec)))
    return objects


def trino_executor(trino_url: str, region: str) -> Execute:
    def execute(sql: str) -> None:
        cursor = trino_connection(Endpoints(region=region, trino=trino_url), user="job").cursor()
        cursor.execute(sql)
        cursor.fetchall()

    return execute


class QueryViews:
    def __init__(
        self,
        objects: list[QueryObject],
        execute: Execute,
        interval_s: float = 10,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.pending = {obj.name: obj for obj in objects}
        self.execute = execute
        self.interval_s = interval_s
        self.clock = clock
        self._last_attempt = -interval_s
        self._thread: threading.Thread | None = None
        self._warned: set[str] = set()

    def poll(self) -> None:
        if not self.pending or (self._thread and self._thread.is_alive()):
            return
        if self.clock() - self._last_attempt < self.interval_s:
            return
        self._last_attempt = self.clock()
        self._thread = threading.Thread(target=self.attempt, name="query-views", daemon=True)
        self._thread.start()

    def finish(self) -> None:
        """At the job's end: wait for an attempt in flight, then one more for what is left."""
        if self._thread:
            self._thread.join()
        if self.pending:
            self.attempt()

    def attempt(self) -> None:
        """Run each pending DDL once; what fails stays pending."""
        for name, obj in list(self.pending.items()):
            try:
                self.execute(obj.ddl)
            except Exception as error:
                text = str(error)
                if "does not exist" in text or "not found" in text.lower():
                    continue  # its Hudi table is not synced yet
                if name not in self._warned:
                    self._warned.add(name)
                    log.warning("creating %s in Trino failed (will retry): %s", name, text[:300])
                continue
            del self.pending[name]
            log.info("Trino: %s is ready", name)
