"""tests/support/xdist_modules: which tests run together on one pytest-xdist worker."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.support.xdist_modules import EXPECTED_SECONDS, WHOLE_MODULES, longest_first, scope_of

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[2]


def test_a_listed_module_is_one_unit_and_other_tests_go_alone() -> None:
    assert scope_of("tests/local/test_notebooks.py::test_x[01-quickstart]") == (
        "tests/local/test_notebooks.py"
    )
    nodeid = "tests/local/test_faults.py::test_sigterm_to_the_job_group_stops_it_between_batches"
    assert scope_of(nodeid) == nodeid


def test_every_end_to_end_module_with_module_scoped_fixtures_is_listed() -> None:
    """(The unit tests run in one process, without pytest-xdist.)"""
    shared = {
        str(path.relative_to(ROOT))
        for path in sorted((ROOT / "tests" / "local").glob("test_*.py"))
        if re.search(r"@pytest\.fixture\(scope=\"module\"", path.read_text())
    }
    assert shared == set(WHOLE_MODULES)


def test_units_go_longest_first_and_a_modules_tests_stay_together_in_order() -> None:
    nodeids = [
        "tests/local/test_stack.py::test_default_stream_was_bootstrapped",
        "tests/local/test_notebooks.py::test_notebook_runs_top_to_bottom[01-quickstart]",
        "tests/local/test_faults.py::test_sigterm_to_the_job_group_stops_it_between_batches",
        "tests/local/test_notebooks.py::test_there_are_seven_numbered_notebooks",
        "tests/local/test_crash_points.py::test_a_crash_at_each_point_loses_and_duplicates_nothing[short]",
    ]  # fmt: skip
    order = [nodeids[i].split("::")[-1][:20] for i in longest_first(nodeids)]
    assert order == [
        "test_notebook_runs_t",  # the module, 235 s, whole
        "test_there_are_seven",
        "test_a_crash_at_each",  # 185 s, whatever its parameter
        "test_sigterm_to_the_",  # 80 s
        "test_default_stream_",  # not named: DEFAULT_SECONDS
    ]


def test_every_expected_duration_names_an_end_to_end_test_or_module() -> None:
    sources = {p.name: p.read_text() for p in (ROOT / "tests" / "local").glob("test_*.py")}
    for unit in EXPECTED_SECONDS:
        assert unit in sources or any(f"def {unit}(" in text for text in sources.values()), unit
