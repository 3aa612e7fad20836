"""lakehouse_job.metastore_sync: which commits also update the metastore."""

import pytest

from lakehouse_job.metastore_sync import MetastoreSync

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
