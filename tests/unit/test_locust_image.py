"""The load generator's image installs every distribution its code imports at load time.

The image (services/locust/Dockerfile) installs a named list of distributions rather than
the whole lock file, so a new import in loadgen (aws_kinesis_agg for KPL) must be added
there too; the compose stack's Locust master otherwise dies on start with an ImportError
that only the container test would show, ten minutes in.
"""

from __future__ import annotations

import ast
import re
import sys
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from lakehouse.config import REPO_ROOT

pytestmark = pytest.mark.unit

DOCKERFILE = REPO_ROOT / "services" / "locust" / "Dockerfile"
LOCUSTFILE = REPO_ROOT / "locust" / "locustfile.py"
# The project's own packages, as the image installs them (pip install --no-deps).
PROJECT_PACKAGES = {
    "loadgen": REPO_ROOT / "locust" / "loadgen",
    "lakehouse": REPO_ROOT / "src" / "lakehouse",
    "lakehouse_tables": REPO_ROOT / "src" / "lakehouse_tables",
    "lakehouse_job": REPO_ROOT / "spark" / "lakehouse_job",
}


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def module_file(module: str) -> Path | None:
    top, *rest = module.split(".")
    base = PROJECT_PACKAGES[top].joinpath(*rest)
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.exists():
            return candidate
    return None


def load_time_imports(path: Path) -> set[str]:
    """Modules imported by the module's top-level statements (imports inside functions
    are the lazy ones, run only on the paths that need them)."""
    found: set[str] = set()
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


def third_party_imports(start: Path) -> set[str]:
    """Top-level third-party modules reached from `start` through the project's modules."""
    seen: set[Path] = set()
    todo = [start]
    third_party: set[str] = set()
    while todo:
        path = todo.pop()
        if path in seen:
            continue
        seen.add(path)
        for module in load_time_imports(path):
            top = module.split(".")[0]
            if top in PROJECT_PACKAGES:
                if (found := module_file(module)) is not None:
                    todo.append(found)
            elif top not in sys.stdlib_module_names and top != "__future__":
                third_party.add(top)
    return third_party


def installed_in_image() -> set[str]:
    """The distributions the Dockerfile names, with everything they require."""
    text = DOCKERFILE.read_text().replace("\\\n", " ")
    install = re.search(r"requirements\.lock\s+((?:[\w.\[\]-]+[ \t]*)+)", text)
    assert install, f"no pip install of named distributions found in {DOCKERFILE}"
    todo = [canonical(re.sub(r"\[.*\]", "", n)) for n in install[1].split()]
    closure: set[str] = set()
    while todo:
        name = todo.pop()
        if name in closure:
            continue
        closure.add(name)
        for line in metadata.requires(name) or []:
            requirement = Requirement(line)
            if requirement.marker is None or requirement.marker.evaluate({"extra": ""}):
                todo.append(canonical(requirement.name))
    return closure


def test_the_locust_image_installs_what_the_load_generator_imports() -> None:
    distributions = metadata.packages_distributions()
    image = installed_in_image()
    missing = {
        module: sorted(canonical(d) for d in distributions.get(module, [module]))
        for module in third_party_imports(LOCUSTFILE)
        if not image.intersection(canonical(d) for d in distributions.get(module, [module]))
    }
    assert missing == {}, f"add these distributions to the pip install line of {DOCKERFILE}"


def test_the_check_sees_the_kpl_import() -> None:
    assert "aws_kinesis_agg" in third_party_imports(LOCUSTFILE)
