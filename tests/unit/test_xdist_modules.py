"""tests/support/xdist_modules: which tests run together on one pytest-xdist worker."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.support.xdist_modules import WHOLE_MODULES, scope_of

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
