"""docker-compose.yml as a new user meets it: in a fresh clone, with the real Compose
CLI, no env file passed and nothing generated first."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from lakehouse.core.config import Settings

pytestmark = pytest.mark.containers


def _compose(clone: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["docker", "compose", *args], cwd=clone, capture_output=True, text=True)


def test_config_validates_without_a_warning(docker_engine: None, clone: Path) -> None:
    version = _compose(clone, "version")
    assert version.returncode == 0 and "v2." in version.stdout, version
    check = _compose(clone, "config", "-q")
    assert check.returncode == 0, check.stderr
    assert check.stderr == "", f"warnings in a fresh clone:\n{check.stderr}"


def test_images_carry_the_versions_of_versions_env(
    docker_engine: None, clone: Path, settings: Settings
) -> None:
    """The one versions file is what compose uses: the check that they never differ."""
    config = json.loads(_compose(clone, "config", "--format", "json").stdout)
    images = {name: service["image"] for name, service in config["services"].items()}
    assert images["localstack"] == f"localstack/localstack:{settings['LOCALSTACK_VERSION']}"
    assert images["minio"] == f"quay.io/minio/minio:{settings['MINIO_VERSION']}"
    assert images["postgres"] == f"postgres:{settings['POSTGRES_IMAGE_TAG']}"
    assert images["trino"] == f"trinodb/trino:{settings['TRINO_VERSION']}"
    assert images["job"] == f"lakehouse/spark:{settings['PYSPARK_VERSION']}"
    assert images["metastore"] == f"lakehouse/hive-metastore:{settings['HIVE_METASTORE_VERSION']}"
    job_env = config["services"]["job"]["environment"]
    for key in ("AWS_REGION", "S3_ACCESS_KEY", "LAKEHOUSE_BUCKET", "KINESIS_STREAM_NAME"):
        assert job_env[key] == settings[key], key


def test_every_service_is_checked_and_bound_to_loopback(docker_engine: None, clone: Path) -> None:
    services = json.loads(_compose(clone, "config", "--format", "json").stdout)["services"]
    assert set(services) >= {
        "localstack", "minio", "postgres", "metastore", "trino", "spark-master",
        "spark-worker", "job", "locust-master", "locust-worker", "jupyter", "prometheus",
    }  # fmt: skip
    for name, service in services.items():
        assert service.get("healthcheck", {}).get("test"), f"{name} has no healthcheck"
        for dep, cond in service.get("depends_on", {}).items():
            assert cond["condition"] == "service_healthy", f"{name} -> {dep}: {cond}"
        for port in service.get("ports", []):
            assert port.get("host_ip") == "127.0.0.1", f"{name} publishes {port}"
    assert not services["spark-worker"].get("ports"), "scalable services publish no port"
    assert not services["locust-worker"].get("ports"), "scalable services publish no port"
