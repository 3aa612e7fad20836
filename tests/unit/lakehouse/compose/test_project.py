"""lakehouse.compose.project: the compose file's shape and the status table, without Docker."""

from __future__ import annotations

import subprocess

import pytest
import yaml

from lakehouse.compose import project
from lakehouse.core.config import REPO_ROOT, SERVICE_ENV_FILES, parse_env_file

pytestmark = pytest.mark.unit


def _root_compose() -> dict:
    return yaml.safe_load((REPO_ROOT / "docker-compose.yml").read_text())


def test_compose_interpolates_from_the_same_env_files_as_local_mode() -> None:
    """One copy of every version and setting: compose's include reads the files that
    lakehouse.core.config reads, nothing else (a copy in a .env could drift)."""
    (include,) = _root_compose()["include"]
    assert include["env_file"] == ["versions.env", *(f"services/{f}" for f in SERVICE_ENV_FILES)]
    assert include["project_directory"] == "."
    assert not (REPO_ROOT / ".env").exists()


def test_every_interpolated_variable_is_defined_or_has_a_default() -> None:
    """`docker compose config` in a fresh clone warns about no unset variable."""
    import re

    stack = (REPO_ROOT / _root_compose()["include"][0]["path"]).read_text()
    defined: set[str] = set()
    for name in _root_compose()["include"][0]["env_file"]:
        defined |= parse_env_file(REPO_ROOT / name).keys()
    used = re.findall(r"\$\{([A-Z0-9_]+)(:?-[^}]*)?\}", stack)
    missing = sorted({name for name, default in used if not default and name not in defined})
    assert not missing, f"no value and no default in the env files: {missing}"


def test_our_images_build_from_the_repository_not_a_staged_folder() -> None:
    stack = yaml.safe_load((REPO_ROOT / "services/stack.compose.yml").read_text())
    builds = {n: s["build"] for n, s in stack["services"].items() if "build" in s}
    assert set(builds) >= {"spark-master", "spark-worker", "job", "metastore", "locust-master"}
    for name, build in builds.items():
        assert build["context"] == ".", name
        assert (REPO_ROOT / build["dockerfile"]).is_file(), name
    ignored = subprocess.run(
        ["git", "check-ignore", "-q", "services/spark/Dockerfile"], cwd=REPO_ROOT
    )
    assert ignored.returncode == 1, "the Dockerfiles are tracked, not staged"


def test_dockerfiles_name_no_architecture() -> None:
    for dockerfile in REPO_ROOT.glob("services/**/Dockerfile"):
        text = dockerfile.read_text()
        for arch in ("amd64", "x86_64", "arm64", "aarch64"):
            assert arch not in text, f"{dockerfile} mentions {arch}"


def test_urls_name_what_each_published_port_is() -> None:
    publishers = [
        {"URL": "127.0.0.1", "TargetPort": 8080, "PublishedPort": 18080, "Protocol": "tcp"},
        {"URL": "::1", "TargetPort": 8080, "PublishedPort": 0, "Protocol": "tcp"},
    ]
    assert project._urls("trino", publishers) == ("http://127.0.0.1:18080/ui/  (Trino UI and API)",)
    assert project._urls("spark-worker", []) == ()


def test_status_table_lists_every_url_on_its_own_line() -> None:
    rows = [
        project.ServiceRow("minio", "lakehouse-minio-1", "running", "healthy",
                           ("http://a  (S3)", "http://b  (console)"), 93.4),
        project.ServiceRow("spark-worker", "lakehouse-spark-worker-1", "running", "", (), None),
    ]  # fmt: skip
    lines = project.format_table(rows).splitlines()
    assert lines[0].split() == ["CONTAINER", "STATE", "MEM", "MiB", "URL"]
    assert "running (healthy)" in lines[1] and "93" in lines[1] and lines[1].endswith("(S3)")
    assert lines[2].strip() == "http://b  (console)"
    assert lines[3].split()[:2] == ["lakehouse-spark-worker-1", "running"]
