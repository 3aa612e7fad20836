"""When a commit also updates the metastore (job.MetastoreSync)."""

import pytest

from lakehouse_job.job import MetastoreSync, TriggerWatchdog

pytestmark = pytest.mark.unit


def test_each_table_syncs_on_its_first_commit_of_a_run() -> None:
    sync = MetastoreSync()
    assert sync.needed("orders_cow")
    sync.done("orders_cow")
    assert not sync.needed("orders_cow")
    assert sync.needed("orders_mor")


def test_a_failed_write_is_synced_again() -> None:
    sync = MetastoreSync()
    assert sync.needed("orders_cow")
    # the write failed: done() was never called
    assert sync.needed("orders_cow")


def test_a_new_partition_brings_a_sync() -> None:
    sync = MetastoreSync()
    sync.done("quarantine", ["2026-11-22"])
    assert not sync.needed("quarantine", ["2026-11-22"])
    assert sync.needed("quarantine", ["2026-11-22", "2026-11-23"])


def test_baseline_syncs_every_commit() -> None:
    sync = MetastoreSync(every_commit=True)
    sync.done("orders_cow")
    assert sync.needed("orders_cow")


def test_the_watchdog_fires_only_when_one_trigger_runs_too_long() -> None:
    now = [0.0]
    watchdog = TriggerWatchdog(10.0, clock=lambda: now[0])
    assert watchdog.overdue(True) is None  # a trigger starts at 0
    now[0] = 9.0
    assert watchdog.overdue(True) is None
    now[0] = 9.5
    assert watchdog.overdue(False) is None  # it ended; the next one starts afresh
    now[0] = 10.0
    assert watchdog.overdue(True) is None
    now[0] = 20.5
    assert watchdog.overdue(True) == 10.5
