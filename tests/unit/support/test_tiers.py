"""tests/support/tiers: the everyday tier `make test` runs, one feature at a time."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.support.tiers import EVERYDAY, everyday_names, is_everyday

pytestmark = pytest.mark.unit

LOCAL = Path(__file__).resolve().parents[2] / "local"


def _end_to_end_names() -> set[str]:
    """Every end-to-end module's file name and test function's name."""
    names: set[str] = set()
    for path in LOCAL.glob("test_*.py"):
        names.add(path.name)
        tree = ast.parse(path.read_text())
        names |= {
            node.name
            for node in tree.body
            if isinstance(node, ast.FunctionDef) and node.name.startswith("test_")
        }
    return names


def test_every_listed_name_is_an_end_to_end_test() -> None:
    """A renamed or removed test would silently leave its feature out of make test."""
    assert everyday_names() - _end_to_end_names() == set()


def test_every_feature_has_a_test() -> None:
    assert all(EVERYDAY.values())


def test_a_listed_module_takes_all_its_tests_and_a_listed_test_its_parameters() -> None:
    assert is_everyday("tests/local/test_notebooks.py::test_notebook_runs_top_to_bottom[01-x]")
    assert is_everyday(
        "tests/local/test_types.py::test_decimals_dates_and_nested_values_read_back_exactly"
    )
    assert not is_everyday("tests/unit/lakehouse/local/test_stack.py::test_up_bootstraps")
    assert not is_everyday(
        "tests/local/test_faults.py::test_sigterm_to_the_job_group_stops_it_between_batches"
    )
