"""lakehouse_job.trino_views: views appear once their tables exist; Trino down is no error."""

from __future__ import annotations

import pytest

from lakehouse_job.hudi_options import SinkSettings
from lakehouse_job.trino_views import QueryViews, query_objects
from lakehouse_tables.declarations import load_tables

pytestmark = pytest.mark.unit


def sink() -> SinkSettings:
    return SinkSettings("s3a://b/w", "s3a://b/raw", "db", "thrift://hms:9083")


def test_one_view_and_one_json_table_per_declared_type() -> None:
    objects = query_objects(load_tables(), sink())
    names = sorted(obj.name for obj in objects)
    types = sorted(load_tables())
    assert names == sorted([*types, *(f"{t}_json" for t in types)])


def test_pending_objects_are_retried_until_their_tables_exist() -> None:
    existing: set[str] = set()
    ran: list[str] = []

    def execute(sql: str) -> list[list[object]]:
        ran.append(sql)
        if not any(f"hudi.db.{table}" in sql for table in existing) and "VIEW" in sql:
            raise RuntimeError("line 3:6: Table 'hudi.db.x' does not exist")
        return []

    orders = [o for o in query_objects(load_tables(), sink()) if o.name.startswith("orders")]
    views = QueryViews(orders, execute)
    views.attempt()
    assert set(views.pending) == {"orders"}  # the JSON table needs no Hudi table
    existing.add("hudi_orders_cow")
    views.attempt()
    assert views.pending == {}
    count = len(ran)
    views.poll()  # nothing left: no more attempts
    assert len(ran) == count


def test_poll_runs_at_most_one_attempt_per_interval() -> None:
    now = [100.0]
    calls: list[str] = []
    objects = query_objects(load_tables(), sink())[:1]

    def fail(sql: str) -> list[list[object]]:
        calls.append(sql)
        raise ConnectionError("Trino is down")

    views = QueryViews(objects, fail, interval_s=10, clock=lambda: now[0])
    views.poll()
    assert views._thread is not None
    views._thread.join()
    views.poll()  # within the interval
    now[0] += 11
    views.poll()
    views._thread.join()
    assert len(calls) == 2 and views.pending  # still pending, never raised


def test_trino_unreachable_ends_the_round_and_finish_is_bounded() -> None:
    import time

    calls: list[str] = []

    def unreachable(sql: str) -> list[list[object]]:
        calls.append(sql)
        raise ConnectionError("connection refused")

    views = QueryViews(query_objects(load_tables(), sink()), unreachable)
    views.attempt()
    assert len(calls) == 1  # not one timeout per object

    def hangs(sql: str) -> list[list[object]]:
        time.sleep(5)
        return []

    slow = QueryViews(query_objects(load_tables(), sink())[:1], hangs)
    started = time.monotonic()
    slow.finish(timeout_s=0.5)
    assert time.monotonic() - started < 2


def test_a_json_table_with_other_columns_is_made_again() -> None:
    (orders_json,) = [o for o in query_objects(load_tables(), sink()) if o.name == "orders_json"]
    stored = [list(column) for column in orders_json.columns]
    ran: list[str] = []

    def execute(sql: str) -> list[list[object]]:
        ran.append(sql)
        return [list(c) for c in stored] if "information_schema" in sql else []

    QueryViews([orders_json], execute, "db").attempt()
    assert not any(sql.startswith("DROP") for sql in ran)  # as declared: kept
    stored.pop(2)  # made by an earlier declaration, without one column
    ran.clear()
    QueryViews([orders_json], execute, "db").attempt()
    assert [sql.split(" (")[0] for sql in ran[-2:]] == [
        "DROP TABLE IF EXISTS hive.db.orders_json",
        "CREATE TABLE IF NOT EXISTS hive.db.orders_json",
    ]
