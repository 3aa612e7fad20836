"""The committed notebooks carry no outputs (they are run by tests/local/test_notebooks.py;
strip outputs before committing: Jupyter's Edit > Clear Outputs of All Cells)."""

from __future__ import annotations

from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

NOTEBOOKS = sorted((Path(__file__).resolve().parents[2] / "notebooks").glob("*.ipynb"))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_has_no_outputs(path: Path) -> None:
    import nbformat

    notebook = nbformat.read(path, as_version=4)
    nbformat.validate(notebook)
    for cell in notebook.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [], f"{path.name}: a cell has outputs: {cell.source[:60]!r}"
            assert cell.execution_count is None, f"{path.name}: execution count kept"
