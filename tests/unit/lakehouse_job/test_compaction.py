"""The compaction thread, against a fake Spark session (lakehouse_job.compaction)."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import pytest
from pyspark.sql import SparkSession

from lakehouse_job.compaction import CompactionRunner
from lakehouse_job.hudi_options import SHARED_WITH_COMPACTOR
from lakehouse_job.status import StatusFile

pytestmark = pytest.mark.unit

TABLES = {
    "s3a://b/w/orders_mor": {"a": "1", "b": "2"},
    "s3a://b/w/ticks_mor": {"c": "3"},
}


class FakeConf:
    def __init__(self) -> None:
        self.values: dict[str, str] = {}

    def set(self, key: str, value: str) -> None:
        self.values[key] = value

    def unset(self, key: str) -> None:
        self.values.pop(key, None)


class FakeResult:
    def __init__(self, rows: list[Any] | None = None) -> None:
        self.rows = rows or []

    def collect(self) -> list[Any]:
        return self.rows


class FakeSpark:
    """Records conf.set and sql(); a statement naming `fail_path` raises."""

    def __init__(self, fail_path: str | None = None) -> None:
        self.conf = FakeConf()
        self.statements: list[str] = []
        self.shown: list[str] = []
        self.plans = [{"state": "COMPLETED"}, {"state": "REQUESTED"}]  # show_compaction's
        self.conf_at_call: list[dict[str, str]] = []
        self.fail_path = fail_path
        self.called = threading.Event()

    def sql(self, text: str) -> FakeResult:
        if "show_compaction" in text:  # the backlog asked after each round, kept apart
            self.shown.append(text)
            return FakeResult(self.plans)
        self.statements.append(text)
        self.conf_at_call.append(dict(self.conf.values))
        self.called.set()
        if self.fail_path and self.fail_path in text:
            raise RuntimeError("lock held by the writer")
        return FakeResult()


def runner(fake: FakeSpark, interval_s: float = 3600.0) -> CompactionRunner:
    return CompactionRunner(cast(SparkSession, fake), lambda: TABLES, interval_s)


@pytest.fixture
def started() -> Iterator[list[CompactionRunner]]:
    """Runners a test started; stopped at the end whatever happens."""
    runners: list[CompactionRunner] = []
    yield runners
    for r in runners:
        r.stop(timeout_s=5)


def wait_for(condition: Any, timeout_s: float = 5.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


def test_start_sets_the_options_shared_with_the_writer(started: list[CompactionRunner]) -> None:
    fake = FakeSpark()
    started.append(runner(fake).start())
    assert fake.conf.values == SHARED_WITH_COMPACTOR


def test_compact_now_runs_each_table_with_its_options() -> None:
    fake = FakeSpark()
    runner(fake).compact_now()
    # "execute": pending plans only; the writer schedules them (Hudi 0.15 takes "run" for
    # scheduleAndExecute, a plan scheduled beside the writer's delta commit).
    assert fake.statements == [
        "CALL run_compaction(op => 'execute', path => 's3a://b/w/orders_mor', "
        "options => 'a=1,b=2')",
        "CALL run_compaction(op => 'execute', path => 's3a://b/w/ticks_mor', options => 'c=3')",
    ]


def test_a_failed_compaction_is_logged_and_the_thread_keeps_going(
    started: list[CompactionRunner], caplog: pytest.LogCaptureFixture
) -> None:
    fake = FakeSpark(fail_path="orders_mor")
    r = runner(fake, interval_s=0.01)
    started.append(r.start())
    # Two rounds: the failing table and the next one, twice.
    wait_for(lambda: len(fake.statements) >= 4)
    assert r._thread.is_alive()
    assert "ticks_mor" in fake.statements[1] and "orders_mor" in fake.statements[2]
    assert "compaction of s3a://b/w/orders_mor failed" in caplog.text


def test_each_round_reports_the_failures_in_a_row_zero_after_a_success() -> None:
    fake = FakeSpark(fail_path="orders_mor")
    reported: list[tuple[str, int, int | None]] = []
    r = CompactionRunner(
        cast(SparkSession, fake), lambda: TABLES, on_compaction=lambda *a: reported.append(a)
    )
    r.compact_now()
    r.compact_now()
    fake.fail_path = None
    r.compact_now()
    assert [n for table, n, _ in reported if table == "orders_mor"] == [1, 2, 0]
    assert [n for table, n, _ in reported if table == "ticks_mor"] == [0, 0, 0]
    # Each round also reports the table's plans not yet completed.
    assert {pending for _, _, pending in reported} == {1}
    assert fake.shown[0] == "CALL show_compaction(path => 's3a://b/w/orders_mor', limit => 100)"


def test_compact_fully_runs_pending_plans_then_schedules_and_executes_every_table() -> None:
    fake = FakeSpark()
    runner(fake).compact_fully()
    during = {**SHARED_WITH_COMPACTOR, "hoodie.compact.inline.max.delta.commits": "1"}
    assert fake.conf_at_call == [during] * 4
    assert fake.conf.values == SHARED_WITH_COMPACTOR  # the writer's own plans as before
    # A plan left pending would otherwise hold its file groups out of the new plan.
    assert [s.split(",")[0] for s in fake.statements] == [
        "CALL run_compaction(op => 'execute'",
        "CALL run_compaction(op => 'scheduleAndExecute'",
    ] * 2
    assert "path => 's3a://b/w/ticks_mor', options => 'c=3'" in fake.statements[3]


def test_stop_joins_the_thread() -> None:
    fake = FakeSpark()
    r = runner(fake, interval_s=0.01).start()
    assert fake.called.wait(5)
    r.stop(timeout_s=5)
    assert not r._thread.is_alive()
    # Nothing runs after stop.
    count = len(fake.statements)
    time.sleep(0.05)
    assert len(fake.statements) == count


def test_stop_does_not_wait_for_the_interval() -> None:
    r = runner(FakeSpark(), interval_s=3600).start()
    begun = time.monotonic()
    r.stop(timeout_s=5)
    assert time.monotonic() - begun < 1
    assert not r._thread.is_alive()


def test_failures_are_counted_reported_and_fail_the_job_after_a_limit(tmp_path: Path) -> None:
    status = tmp_path / "job-status.json"
    fake = FakeSpark(fail_path="orders_mor")
    compactor = CompactionRunner(
        cast(SparkSession, fake), lambda: TABLES, 3600.0, 3, status=StatusFile(status)
    )
    for round_ in range(1, 4):
        compactor.compact_now()
        reported = json.loads(status.read_text())["compaction"]
        assert reported["s3a://b/w/orders_mor"]["consecutive_failures"] == round_
        assert reported["s3a://b/w/orders_mor"]["last_error"] == "lock held by the writer"
        assert reported["s3a://b/w/ticks_mor"]["runs"] == round_
        assert (compactor.failed is None) == (round_ < 3)
    assert compactor.failed is not None and "orders_mor failed 3 times in a row" in compactor.failed
    assert json.loads(status.read_text())["compaction_failed"] == compactor.failed


def test_a_success_resets_the_run_of_failures() -> None:
    fake = FakeSpark(fail_path="orders_mor")
    compactor = runner(fake)
    compactor.compact_now()
    fake.fail_path = None
    compactor.compact_now()
    health = compactor.health["s3a://b/w/orders_mor"]
    assert (health.runs, health.failures, health.consecutive_failures) == (1, 1, 0)
    assert health.last_success_at is not None


def test_a_table_quiet_for_an_interval_is_compacted_once_per_write() -> None:
    fake = FakeSpark()
    now = [1000.0]
    writes = {"s3a://b/w/orders_mor": 995.0, "s3a://b/w/ticks_mor": 900.0}
    compactor = CompactionRunner(
        cast(SparkSession, fake), lambda: TABLES, 20.0, last_writes=lambda: writes,
        clock=lambda: now[0],
    )  # fmt: skip
    compactor.compact_quiet_tables()  # orders was written 5 s ago: not quiet yet
    assert fake.statements == [
        "CALL run_compaction(op => 'scheduleAndExecute', path => 's3a://b/w/ticks_mor', "
        "options => 'c=3')"
    ]
    assert fake.conf.values == {}  # the writer's every-N-delta-commits plan is back
    now[0] = 1020.0
    compactor.compact_quiet_tables()
    assert len(fake.statements) == 2 and "orders_mor" in fake.statements[1]
    compactor.compact_quiet_tables()  # nothing written since: nothing to do
    assert len(fake.statements) == 2
    writes["s3a://b/w/ticks_mor"] = 1030.0
    now[0] = 1060.0
    compactor.compact_quiet_tables()
    assert len(fake.statements) == 3 and "ticks_mor" in fake.statements[2]


def test_a_quiet_table_waits_while_a_batch_is_writing() -> None:
    fake = FakeSpark()
    write_lock = threading.Lock()
    compactor = CompactionRunner(
        cast(SparkSession, fake), lambda: TABLES, 20.0,
        last_writes=lambda: {"s3a://b/w/ticks_mor": 900.0}, clock=lambda: 1000.0,
        write_lock=write_lock,
    )  # fmt: skip
    with write_lock:  # a delta commit in flight: no plan may be scheduled beside it
        compactor.compact_quiet_tables()
    assert fake.statements == []
    compactor.compact_quiet_tables()
    assert len(fake.statements) == 1 and not write_lock.locked()
