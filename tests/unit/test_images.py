"""Our images install every distribution their code imports at load time.

The load generator's image (services/locust/Dockerfile) and the Spark image's runtime
stage (services/spark/Dockerfile, the job) install a named list of distributions rather
than the whole lock file, so a new import (aws_kinesis_agg for KPL in loadgen,
prometheus_client in the job) must be added there too; the compose stack's container
otherwise dies on start with an ImportError that only the container test would show, ten
minutes in.
"""

from __future__ import annotations

import ast
import functools
import re
import sys
from collections.abc import Callable, Iterable
from importlib import metadata
from pathlib import Path
from typing import TypeVar

import pytest
from packaging.requirements import Requirement

from lakehouse.core.config import REPO_ROOT

pytestmark = pytest.mark.unit

T = TypeVar("T")

LOCUST_DOCKERFILE = REPO_ROOT / "services" / "locust" / "Dockerfile"
LOCUSTFILE = REPO_ROOT / "locust" / "locustfile.py"
SPARK_DOCKERFILE = REPO_ROOT / "services" / "spark" / "Dockerfile"
# The job's Python environment for EMR Serverless, whose Spark brings pyspark (and py4j).
EMR_DOCKERFILE = REPO_ROOT / "services" / "aws" / "emr-serverless" / "Dockerfile"
ON_EMR = {"pyspark"}
JOB_ENTRY_POINTS = [
    REPO_ROOT / "spark" / "lakehouse_job" / "job.py",
    REPO_ROOT / "spark" / "lakehouse_job" / "backfill.py",
]
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


@functools.cache  # each module is parsed once, though walked and then read for imports
def load_time_imports(path: Path) -> frozenset[str]:
    """Modules imported by the module's top-level statements (imports inside functions
    are the lazy ones, run only on the paths that need them)."""
    found: set[str] = set()
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return frozenset(found)


def reachable(start: Iterable[T], step: Callable[[T], Iterable[T]]) -> set[T]:
    """Everything reached from `start` by repeating `step`, `start` included."""
    found: set[T] = set()
    todo = list(start)
    while todo:
        item = todo.pop()
        if item not in found:
            found.add(item)
            todo.extend(step(item))
    return found


def third_party_imports(start: Path) -> set[str]:
    """Top-level third-party modules reached from `start` through the project's modules."""

    def project_modules(path: Path) -> list[Path]:
        found = (
            module_file(m) for m in load_time_imports(path) if m.split(".")[0] in PROJECT_PACKAGES
        )
        return [f for f in found if f is not None]

    return {
        top
        for path in reachable([start], project_modules)
        for module in load_time_imports(path)
        if (top := module.split(".")[0]) not in PROJECT_PACKAGES
        and top not in sys.stdlib_module_names
        and top != "__future__"
    }


def installed_in_image(dockerfile: Path) -> set[str]:
    """The distributions the Dockerfile's first pip install against the lock file names
    (`-c requirements.lock a "b==${B}" c[x]`), with everything they require."""
    text = dockerfile.read_text().replace("\\\n", " ")
    install = re.search(r"-c[ \t]+\S*requirements\.lock[ \t]+([^&\n]+)", text)
    assert install, f"no pip install of named distributions found in {dockerfile}"
    names = [re.split(r"[=<>\[]", token.strip("\"'"))[0] for token in install[1].split()]

    def requires(name: str) -> list[str]:
        return [
            canonical(requirement.name)
            for requirement in map(Requirement, metadata.requires(name) or [])
            if requirement.marker is None or requirement.marker.evaluate({"extra": ""})
        ]

    return reachable((canonical(name) for name in names), requires)


def missing_from(dockerfile: Path, entry_points: list[Path]) -> dict[str, list[str]]:
    distributions = metadata.packages_distributions()
    image = installed_in_image(dockerfile)
    imports = set().union(*(third_party_imports(p) for p in entry_points))
    return {
        module: sorted(canonical(d) for d in distributions.get(module, [module]))
        for module in imports
        if not image.intersection(canonical(d) for d in distributions.get(module, [module]))
    }


def test_the_locust_image_installs_what_the_load_generator_imports() -> None:
    missing = missing_from(LOCUST_DOCKERFILE, [LOCUSTFILE])
    assert missing == {}, f"add these distributions to the pip install line of {LOCUST_DOCKERFILE}"


def test_the_spark_image_installs_what_the_job_imports() -> None:
    missing = missing_from(SPARK_DOCKERFILE, JOB_ENTRY_POINTS)
    assert missing == {}, f"add these distributions to the pip install line of {SPARK_DOCKERFILE}"


def test_the_emr_serverless_environment_installs_what_the_job_imports() -> None:
    missing = missing_from(EMR_DOCKERFILE, JOB_ENTRY_POINTS)
    assert {m: d for m, d in missing.items() if m not in ON_EMR} == {}, (
        f"add these distributions to the pip install line of {EMR_DOCKERFILE}"
    )


def test_the_check_sees_the_kpl_and_metrics_imports() -> None:
    assert "aws_kinesis_agg" in third_party_imports(LOCUSTFILE)
    assert {"prometheus_client", "pyspark"} <= third_party_imports(JOB_ENTRY_POINTS[0])
