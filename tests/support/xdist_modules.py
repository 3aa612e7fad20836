"""A pytest plugin: `make test`'s pytest-xdist scheduling, test by test except for the
modules whose tests share module-scoped fixtures, which run whole on one worker.

pytest-xdist's own way, `--dist loadgroup` with `xdist_group` marks, does nothing under
pytest 9 (xdist 3.8 renames the node id, which pytest 9 no longer reads): every test of
such a module was handed out alone, each worker set the module's fixtures up for itself,
and the notebooks' worker that finished first stopped the pipeline job the other's
notebooks were waiting on. The scheduler sees only node ids, so the modules are named
here (tests/unit/test_xdist_modules.py checks that every module with a module-scoped
fixture is). Work is handed out in collection order, which tests/local/conftest.py makes
longest first (`longest_first`, from EXPECTED_SECONDS).
"""

from __future__ import annotations

from typing import Any, Final

import pytest

# Modules (paths from the rootdir) whose tests share module-scoped fixtures.
WHOLE_MODULES: Final = frozenset(
    {
        "tests/local/test_notebooks.py",
        "tests/local/test_hudi_rs.py",
        "tests/local/test_kinesis_source.py",
    }
)


# Each unit's seconds in the end-to-end part of `make test` (setup, call and teardown;
# `pytest -m "(local or faults) and not long and not soak" --durations=0 -n 2`, 2026-11-28),
# rounded to 5; a unit not named here counts DEFAULT_SECONDS. Handed out longest first,
# the short ones fill in beside the long ones at the end. Measured, the same command
# before and after: the old order (modules by a list) left one worker idle 77 s at the
# end and the other waiting 20-60 s for the stack at the start; this order 43 and 41 s at
# the end (two runs) and no wait, since the AWS simulation needs no stack.
# Add a test that takes a minute or more here. Keys: a listed module's file name, else
# the test's name (unique among the end-to-end tests).
EXPECTED_SECONDS: Final[dict[str, int]] = {
    "test_notebooks.py": 235,
    # The only long test that needs no local stack: second, it runs while the first
    # worker starts the stack, instead of waiting on it.
    "test_load_job_and_glue_on_a_simulated_account": 220,
    "test_a_crash_at_each_point_loses_and_duplicates_nothing": 185,
    "test_a_job_killed_mid_stream_is_restarted_and_loses_and_duplicates_nothing": 130,
    "test_prometheus_scrapes_the_job_and_spark_and_evaluates_the_rules": 120,
    "test_debezium_stopped_and_killed_mid_load_then_the_job_killed": 95,
    "test_a_job_killed_in_the_middle_of_aggregates_loses_and_repeats_nothing": 85,
    "test_sigterm_to_the_job_group_stops_it_between_batches": 80,
    "test_throttles_expired_iterators_and_500s_lose_and_duplicate_nothing": 80,
    "test_a_new_checkpoint_keeps_the_raw_copy_and_a_recreated_stream_fails_loudly": 70,
    "test_a_column_added_mid_stream_and_changes_refused_before_writing": 60,
    "test_postgres_changes_reach_the_lake_column_by_column": 60,
    "test_tables_added_removed_and_added_back_then_a_lost_slot_reset": 80,
    "test_a_database_replaced_by_another_cluster_is_started_over": 65,
    "test_a_latest_query_killed_before_any_record_reads_all_put_after_its_start": 35,
    "test_kpl_aggregates_plain_records_and_a_corrupt_aggregate_on_one_stream": 35,
    "test_a_killed_predecessors_lease_on_this_host_is_taken_at_once": 30,
    "test_scripted_stream_reaches_every_sink_exactly": 30,
    "test_hudi_rs.py": 30,
    "test_a_table_whose_creation_a_crash_cut_short_is_recreated": 30,
    "test_kinesis_source.py": 20,
    "test_decimals_dates_and_nested_values_read_back_exactly": 20,
}  # fmt: skip
DEFAULT_SECONDS: Final = 10


def expected_seconds(nodeid: str) -> int:
    """The expected seconds of the unit of work `nodeid` belongs to."""
    unit = scope_of(nodeid).rsplit("/", 1)[-1]
    name = unit.split("::")[-1].split("[", 1)[0]
    return EXPECTED_SECONDS.get(name, DEFAULT_SECONDS)


def longest_first(nodeids: list[str]) -> list[int]:
    """The positions of `nodeids` in the order to hand them out: units by their expected
    seconds, longest first; a module's tests together, in their own order."""
    first_seen: dict[str, int] = {}
    for position, nodeid in enumerate(nodeids):
        first_seen.setdefault(scope_of(nodeid), position)
    return sorted(
        range(len(nodeids)),
        key=lambda i: (-expected_seconds(nodeids[i]), first_seen[scope_of(nodeids[i])], i),
    )


def scope_of(nodeid: str) -> str:
    """The unit of work a test belongs to: its module if listed, else the test alone."""
    module = nodeid.split("::", 1)[0]
    return module if module in WHOLE_MODULES else nodeid


@pytest.hookimpl(optionalhook=True)  # a run without xdist (-p no:xdist) has no such hook
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    from xdist.scheduler import LoadScopeScheduling

    class WholeModulesScheduling(LoadScopeScheduling):
        def __init__(self, config: pytest.Config, log: Any = None) -> None:
            super().__init__(config, log)
            config.option.loadscopereorder = False  # keep the collection's order

        def _split_scope(self, nodeid: str) -> str:
            return scope_of(nodeid)

    return WholeModulesScheduling(config, log)
