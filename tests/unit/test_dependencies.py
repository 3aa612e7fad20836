"""requirements.lock pins every declared dependency, and pyspark at versions.env's version."""

import re
import tomllib
from pathlib import Path

import pytest

from lakehouse.core.config import REPO_ROOT, parse_env_file

pytestmark = pytest.mark.unit

LOCK = REPO_ROOT / "requirements.lock"


def pinned(path: Path = LOCK) -> dict[str, str]:
    pins = {}
    for line in path.read_text().splitlines():
        if match := re.match(r"^([A-Za-z0-9_.-]+)==([^\s;]+)", line):
            pins[canonical(match[1])] = match[2]
    return pins


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def declared() -> list[str]:
    project = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["project"]
    names = [*project["dependencies"], *project["optional-dependencies"]["dev"]]
    return [canonical(re.split(r"[<>=!~\[; ]", name)[0]) for name in names]


def test_the_lock_pins_pyspark_at_the_versions_file_version() -> None:
    version = parse_env_file(REPO_ROOT / "versions.env")["PYSPARK_VERSION"]
    assert pinned()["pyspark"] == version, "run `make lock` after changing PYSPARK_VERSION"


def test_the_lock_pins_every_declared_dependency() -> None:
    missing = sorted(set(declared()) - set(pinned()))
    assert missing == [], "run `make lock` after changing pyproject.toml's dependencies"
