"""A pytest plugin: `make test`'s pytest-xdist scheduling, test by test except for the
modules whose tests share module-scoped fixtures, which run whole on one worker.

pytest-xdist's own way, `--dist loadgroup` with `xdist_group` marks, does nothing under
pytest 9 (xdist 3.8 renames the node id, which pytest 9 no longer reads): every test of
such a module was handed out alone, each worker set the module's fixtures up for itself,
and the notebooks' worker that finished first stopped the pipeline job the other's
notebooks were waiting on. The scheduler sees only node ids, so the modules are named
here (tests/unit/test_xdist_modules.py checks that every module with a module-scoped
fixture is). Work is handed out in collection order (tests/local/conftest.py puts the
longest first), not by size.
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
