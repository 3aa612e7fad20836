"""Which of the project's packages may import which.

lakehouse_tables (declarations and record rules) is the bottom layer: pure, imported by
all. The streaming job (lakehouse_job, in spark/) is launched, never imported, by the
CLI (src/lakehouse) and the load generator (locust/), so neither drags pyspark or the
job's code into the Locust image or the CLI.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

REPO = Path(__file__).resolve().parents[2]
OURS = ("lakehouse", "lakehouse_tables", "lakehouse_job", "loadgen")

# folder -> the project packages (and heavy dependencies) its modules must not import
FORBIDDEN = {
    "src/lakehouse_tables": ("lakehouse", "lakehouse_job", "loadgen", "pyspark", "boto3"),
    "locust": ("lakehouse_job", "pyspark"),
    "src/lakehouse": ("lakehouse_job", "pyspark"),
    "spark/lakehouse_job": ("loadgen",),
}


def imported_roots(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    roots: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            roots.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            roots.add(node.module.split(".")[0])
    return roots


@pytest.mark.parametrize("folder", sorted(FORBIDDEN))
def test_package_imports_respect_the_layers(folder: str) -> None:
    broken = {}
    for path in sorted((REPO / folder).rglob("*.py")):
        bad = imported_roots(path) & set(FORBIDDEN[folder])
        if bad:
            broken[str(path.relative_to(REPO))] = sorted(bad)
    assert broken == {}


def test_the_checker_sees_imports() -> None:
    # Guards the test above against passing vacuously (a wrong folder, a parser change).
    assert "lakehouse_tables" in imported_roots(REPO / "spark/lakehouse_job/validate.py")
    assert "lakehouse_tables" in imported_roots(REPO / "locust/loadgen/validation.py")
