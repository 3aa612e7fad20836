"""Every notebook in notebooks/ runs top to bottom against the live local stack, with the
streaming job running as `make notebook` runs it; a cell error (each notebook asserts
the facts it shows) fails the test. Outputs are not kept (tests/unit/test_notebooks.py
checks the committed notebooks carry none)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import pytest

from lakehouse.core.config import Settings
from lakehouse.local import shells
from lakehouse.local import stack as stack_module
from tests.local.conftest import Stack
from tests.support.cdc import cdc_part

# One worker runs this module's tests, which share its module-scoped fixtures
# (tests/support/xdist_modules.py).
pytestmark = pytest.mark.local

NOTEBOOKS = sorted(shells.NOTEBOOKS_DIR.glob("*.ipynb"))
# Mostly waiting (for a compaction): run beside the others, which also feed it commits, and
# checked after them (checked second, it held the others back for ~80 s while it waited).
IN_BACKGROUND = "02-query-types.ipynb"
IN_TEST_ORDER = sorted(NOTEBOOKS, key=lambda path: path.name == IN_BACKGROUND)


@pytest.fixture(scope="module")
def notebook_env(stack: Stack, monkeypatch_module: pytest.MonkeyPatch) -> Iterator[Settings]:
    """The pipeline as `make notebook` leaves it, and a kernel environment like its one
    (kernels inherit this process's environment)."""
    settings = stack.settings
    supervisor = stack_module.supervisor_for(settings)
    started_job = not supervisor.is_running(stack_module.JOB)
    shells.ensure_pipeline(settings, print)
    for key, value in shells.notebook_env(settings).items():
        monkeypatch_module.setenv(key, value)
    yield settings
    if started_job:
        supervisor.stop(stack_module.JOB, timeout_s=60)


@pytest.fixture(scope="module")
def monkeypatch_module() -> Iterator[pytest.MonkeyPatch]:
    with pytest.MonkeyPatch.context() as patch:
        yield patch


def execute(path: Path) -> float:
    """Run a notebook top to bottom in a fresh python3 kernel; its seconds. A cell error
    raises CellExecutionError, naming the cell and its traceback."""
    import nbformat
    from nbclient import NotebookClient

    notebook = nbformat.read(path, as_version=4)
    client = NotebookClient(
        notebook,
        timeout=600,
        kernel_name="python3",
        resources={"metadata": {"path": str(path.parent)}},
    )
    started = time.monotonic()
    client.execute()
    return time.monotonic() - started


@pytest.fixture(scope="module")
def background(notebook_env: Settings) -> Iterator[dict[str, Future[float]]]:
    with ThreadPoolExecutor(max_workers=1) as pool:
        yield {IN_BACKGROUND: pool.submit(execute, shells.NOTEBOOKS_DIR / IN_BACKGROUND)}


@pytest.mark.parametrize("path", IN_TEST_ORDER, ids=lambda p: p.stem)
def test_notebook_runs_top_to_bottom(
    notebook_env: Settings, background: dict[str, Future[float]], path: Path, tmp_path: Path
) -> None:
    running = background.get(path.name)
    try:
        if running:
            seconds = running.result()
        elif path.name == CDC_NOTEBOOK:
            seconds = execute_with_cdc_part(notebook_env, path, tmp_path)
        else:
            seconds = execute(path)
    except Exception:
        # What the stack's job (the notebooks' pipeline) was doing when the cell failed.
        job_log = stack_module.supervisor_for(notebook_env).log_file(stack_module.JOB)
        print(f"--- the last lines of {job_log}:")
        print("\n".join(job_log.read_text(errors="replace").splitlines()[-60:]))
        raise
    print(f"{path.name}: {seconds:.0f}s")


# Needs the stack's CDC part (`lakehouse up --cdc`): the test gives it one of its own.
CDC_NOTEBOOK = "07-change-data-capture.ipynb"


def execute_with_cdc_part(settings: Settings, path: Path, logs: Path) -> float:
    with cdc_part(settings, logs) as part, pytest.MonkeyPatch.context() as patch:
        for key, value in part.settings.env.items():
            if key.startswith("CDC_"):
                patch.setenv(key, value)
        return execute(path)


def test_there_are_seven_numbered_notebooks() -> None:
    assert [p.name[:3] for p in NOTEBOOKS] == ["01-", "02-", "03-", "04-", "05-", "06-", "07-"]
