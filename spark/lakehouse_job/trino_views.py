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
from typing import Any

from lakehouse.core.clients import Endpoints, trino_connection
from lakehouse_job.hudi_options import SinkSettings
from lakehouse_job.sinks import raw_json_path
from lakehouse_tables.declarations import TableSpec
from lakehouse_tables.query_views import QueryObject, json_table, live_view

# Named as when this module was query_views: log lines keep their logger name.
log = logging.getLogger("lakehouse_job.query_views")
Execute = Callable[[str], list[list[Any]]]


def query_objects(specs: Mapping[str, TableSpec], sink: SinkSettings) -> list[QueryObject]:
    objects = []
    for spec in specs.values():
        objects.append(live_view(spec, sink.database))
        objects.append(json_table(spec, sink.database, raw_json_path(sink, spec)))
    return objects


def trino_executor(trino_url: str, region: str) -> Execute:
    def execute(sql: str) -> list[list[Any]]:
        endpoints = Endpoints(region=region, trino=trino_url)
        cursor = trino_connection(endpoints, user="job", request_timeout_s=10).cursor()
        cursor.execute(sql)
        return cursor.fetchall()

    return execute


class QueryViews:
    def __init__(
        self,
        objects: list[QueryObject],
        execute: Execute,
        database: str = "",
        interval_s: float = 10,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.pending = {obj.name: obj for obj in objects}
        self.execute = execute
        self.database = database
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

    def finish(self, timeout_s: float = 30) -> None:
        """At the job's end (a short --available-now run may end before its first attempt):
        one more attempt for what is left, given at most `timeout_s` in all, so that a
        Trino that does not answer never holds up the job's exit."""
        deadline = self.clock() + timeout_s
        if self._thread:
            self._thread.join(timeout_s)
        if self.pending and not (self._thread and self._thread.is_alive()):
            self._thread = threading.Thread(target=self.attempt, name="query-views", daemon=True)
            self._thread.start()
            self._thread.join(max(0.0, deadline - self.clock()))

    def attempt(self) -> None:
        """Run each pending DDL once; what fails stays pending."""
        from trino.exceptions import TrinoQueryError

        for name, obj in list(self.pending.items()):
            try:
                self.execute(obj.ddl)
                self._match_columns(obj)
            except Exception as error:
                text = str(error)
                if "does not exist" in text or "not found" in text.lower():
                    continue  # its Hudi table is not synced yet
                if name not in self._warned:
                    self._warned.add(name)
                    log.warning("creating %s in Trino failed (will retry): %s", name, text[:300])
                if isinstance(error, TrinoQueryError):
                    continue  # this statement's problem: the others may still work
                break  # Trino does not answer: try again next round
            del self.pending[name]
            log.info("Trino: %s is ready", name)

    def _match_columns(self, obj: QueryObject) -> None:
        """An external table made by an earlier declaration (CREATE TABLE IF NOT EXISTS
        kept it) is made again with the declared columns; dropping an external table
        leaves its files in place."""
        if not obj.columns:
            return
        found = [(str(r[0]), str(r[1])) for r in self.execute(obj.columns_query(self.database))]
        if found == list(obj.columns):
            return
        log.info("Trino: %s has other columns than declared now: making it again", obj.name)
        self.execute(obj.drop_ddl(self.database))
        self.execute(obj.ddl)
