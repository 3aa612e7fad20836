"""A pytest plugin: which end-to-end tests `make test` runs (the everyday tier).

`make test` is the check a maintainer runs many times a day; `make test-all` (and CI) runs
every end-to-end test. On the project's 2-core machines the whole end-to-end suite is
CPU-bound and most of its cost is job starts, most of them restarts that the fault tests
exist to prove; so the everyday tier keeps one test per feature, chosen by what a
regression would most likely break, and leaves the repeated restarts to `make test-all`.

EVERYDAY maps each feature to the tests that cover it in the everyday tier: a feature
missing here is a hole in `make test`, and tests/unit/test_tiers.py fails when a name here
no longer matches a test. The plugin marks those tests `everyday` before pytest selects by
marker, so `-m everyday` picks them.
"""

from __future__ import annotations

from typing import Final

import pytest

# Feature -> the tests (a module's file name for a whole module, else a test's name,
# unique among the end-to-end tests) that exercise it in `make test`.
EVERYDAY: Final[dict[str, tuple[str, ...]]] = {
    "the stack's services through their own clients": ("test_stack.py",),
    "the load generator's stream against its ledger": ("test_loadgen_stream.py",),
    "every sink and both table types, exactly": (
        "test_scripted_stream_reaches_every_sink_exactly",
    ),
    "decimals, dates, nested values": ("test_decimals_dates_and_nested_values_read_back_exactly",),
    "a schema change mid-stream, and changes refused before writing": (
        "test_a_column_added_mid_stream_and_changes_refused_before_writing",
    ),
    "change data capture from PostgreSQL": (
        "test_postgres_changes_reach_the_lake_column_by_column",
    ),
    "KPL aggregates, a corrupt one quarantined": (
        "test_kpl_aggregates_plain_records_and_a_corrupt_aggregate_on_one_stream",
    ),
    "a crash mid-batch and its replay, exactly once": (
        "test_a_job_killed_in_the_middle_of_aggregates_loses_and_repeats_nothing",
    ),
    "a table a crash left half-created": (
        "test_a_table_whose_creation_a_crash_cut_short_is_recreated",
    ),
    "the Kinesis source: shards, splits, several streams, checkpoints": ("test_kinesis_source.py",),
    "a refused start, before anything is written": (
        "test_a_live_lease_of_another_host_refuses_the_job_before_it_writes",
    ),
    "the notebooks": ("test_notebooks.py",),
    "two writers of one table: a backfill beside the running job": (
        "test_a_backfill_beside_the_running_job_loses_and_duplicates_nothing",
    ),
    "your own event type sent with lakehouse send, the job restarted alone": (
        "test_send_a_file_then_restart_the_job_on_a_changed_tables_file",
    ),
    "metrics and alert rules": (
        "test_the_alert_rules_fire_on_their_cases",
        "test_prometheus_scrapes_the_job_and_spark_and_evaluates_the_rules",
    ),
    "an independent reader (hudi-rs): snapshot, time travel, incremental": ("test_hudi_rs.py",),
}

MARKER: Final = "everyday"
END_TO_END: Final = "tests/local/"


def everyday_names() -> frozenset[str]:
    return frozenset(name for names in EVERYDAY.values() for name in names)


def tier_key(nodeid: str) -> tuple[str, str]:
    """The two names a test can be listed under: its module's file name and its own."""
    module = nodeid.split("::", 1)[0].rsplit("/", 1)[-1]
    name = nodeid.split("::")[-1].split("[", 1)[0]
    return module, name


def is_everyday(nodeid: str) -> bool:
    """Only end-to-end tests: unit test modules share some of their file names."""
    return nodeid.startswith(END_TO_END) and not everyday_names().isdisjoint(tier_key(nodeid))


# Before pytest's own marker selection (the mark plugin's hook, not tryfirst), which then
# sees the added marker.
@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if is_everyday(item.nodeid):
            item.add_marker(MARKER)
