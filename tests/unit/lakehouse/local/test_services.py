"""lakehouse.local.services: what local mode tells Prometheus to scrape; the JVM services' JIT."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import pytest
import yaml

from lakehouse.core.config import SERVICES_DIR, load_settings
from lakehouse.local import services
from lakehouse.local.job_launcher import QUICK_JIT
from lakehouse.local.services import SERVICE_BUILDERS, prometheus_targets

pytestmark = pytest.mark.unit


def test_every_scrape_job_has_local_targets_and_the_job_metrics_port() -> None:
    settings = load_settings({})
    config = yaml.safe_load((SERVICES_DIR / "prometheus" / "prometheus.yml").read_text())
    files = {
        path
        for job in config["scrape_configs"]
        for sd in job["file_sd_configs"]
        for path in sd["files"]
    }
    targets = prometheus_targets(settings)
    # targets/<name>*.json: local mode writes <name>.json, tests add <name>-<port>.json.
    assert {re.fullmatch(r"targets/(.+)\*\.json", f)[1] for f in files} == set(targets)  # type: ignore[index]
    assert targets["lakehouse-job"] == [{"targets": ["127.0.0.1:9464"]}]
    assert targets["spark-driver"] == [{"targets": ["127.0.0.1:4040"]}]
    assert config["rule_files"] == ["rules.yml"]
    assert "prometheus" in SERVICE_BUILDERS


def test_compose_scrapes_the_same_jobs_on_the_same_ports_by_service_name() -> None:
    local = prometheus_targets(load_settings({}))
    folder = SERVICES_DIR / "prometheus" / "compose-targets"
    compose = {path.stem: json.loads(path.read_text()) for path in folder.glob("*.json")}
    # Each compose service is a container, which the engine accounts for: no processes job.
    del local["processes"]
    assert set(compose) == set(local)

    def ports(groups: list[dict[str, list[str]]]) -> list[str]:
        return [target.rsplit(":", 1)[1] for group in groups for target in group["targets"]]

    for job in local:
        assert ports(compose[job]) == ports(local[job]), job
    assert compose["lakehouse-job"] == [{"targets": ["job:9464"]}]  # the compose service


def test_jvm_services_run_c1_only_when_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    settings = load_settings({})
    monkeypatch.delenv(services.SERVICES_JIT_ENV, raising=False)
    assert "JAVA_TOOL_OPTIONS" not in services._jvm_env(settings)
    monkeypatch.setenv(services.SERVICES_JIT_ENV, "quick")
    assert services._jvm_env(settings)["JAVA_TOOL_OPTIONS"] == QUICK_JIT
    assert "JAVA_TOOL_OPTIONS" not in services._base_env(settings)  # MinIO, Kinesis, ...


def test_zookeeper_serves_the_writers_lock_on_loopback_from_sparks_own_jar(
    tmp_path: Path,
) -> None:
    settings = dataclasses.replace(load_settings({}), state_dir=tmp_path)
    spec = services.zookeeper_spec(settings)
    assert spec.command[-2] == "org.apache.zookeeper.server.quorum.QuorumPeerMain"
    classpath = spec.command[spec.command.index("-cp") + 1]
    assert classpath.endswith("pyspark/jars/*")
    config = dict(
        line.split("=", 1) for line in Path(spec.command[-1]).read_text().splitlines() if line
    )
    assert config["clientPortAddress"] == "127.0.0.1"
    assert config["clientPort"] == settings["ZOOKEEPER_PORT"] == "2181"
    assert config["admin.enableServer"] == "false"  # an HTTP port on every interface
    # The writers' session timeout lies within what the server grants (2 to 20 ticks).
    tick = int(config["tickTime"])
    assert 2 * tick <= int(settings["ZOOKEEPER_SESSION_TIMEOUT_MS"]) <= 20 * tick
    assert settings.lock_url == "127.0.0.1:2181" == settings.service_env()["LOCK_URL"]
    assert spec.ports == (2181,)
