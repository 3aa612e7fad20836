"""The stack in containers, for tests marked `containers` (make integration-test).

Session fixtures, in order: a Docker engine (started, and stopped at the end, only
when none was running), `docker compose` v2, every image (tests/containers/harness.py),
then the stack itself through testcontainers' DockerCompose, on host ports that do
not clash with a running local stack. Nothing here skips: when the engine cannot be
started the tests fail with the reason. testcontainers is imported lazily so that
collecting the other test suites never needs it.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from tests.containers import harness

PROJECT = "lakehouse-it"
# Host ports for the test's stack (the local stack may hold the defaults).
HOST_PORTS = {
    "KINESIS_HOST_PORT": 14566,
    "MINIO_HOST_PORT": 19000,
    "MINIO_CONSOLE_HOST_PORT": 19001,
    "HMS_HOST_PORT": 19083,
    "TRINO_HOST_PORT": 18080,
    "SPARK_MASTER_UI_HOST_PORT": 18090,
    "JOB_UI_HOST_PORT": 14040,
    "LOCUST_HOST_PORT": 18089,
}


@pytest.fixture(scope="session")
def engine() -> Iterator[None]:
    try:
        started = harness.ensure_engine()
        harness.ensure_compose()
    except harness.HarnessError as error:
        pytest.fail(f"no Docker engine could be started: {error}", pytrace=False)
    try:
        yield
    finally:
        if started:
            harness.stop_engine()


@pytest.fixture(scope="session")
def images(engine: None) -> dict[str, str]:
    started = time.monotonic()
    try:
        report = harness.prepare()
    except harness.HarnessError as error:
        pytest.fail(f"images could not be prepared: {error}", pytrace=False)
    print(f"\nimages ready in {time.monotonic() - started:.0f}s: {report}")
    return report


@dataclass
class Stack:
    compose: object  # testcontainers.compose.DockerCompose
    ports: dict[str, int]
    up_seconds: float

    def command(self, *args: str) -> list[str]:
        return [*harness.compose_command(PROJECT), *args]


@pytest.fixture(scope="session")
def stack(images: dict[str, str]) -> Iterator[Stack]:
    from testcontainers.compose import DockerCompose

    for key, port in HOST_PORTS.items():
        os.environ[key] = str(port)
    os.environ["COMPOSE_PROJECT_NAME"] = PROJECT
    compose = DockerCompose(
        context=str(harness.REPO),
        compose_file_name="docker-compose.yml",
        env_file=[str(harness.REPO / f) for f in harness.ENV_FILES],
        wait=True,
    )
    started = time.monotonic()
    try:
        compose.start()
    except Exception:
        stdout, stderr = _logs(compose)
        compose.stop()
        pytest.fail(f"the stack did not become healthy; logs:\n{stdout[-8000:]}{stderr[-4000:]}")
    up = time.monotonic() - started
    print(f"\nstack healthy in {up:.0f}s")
    try:
        yield Stack(compose, dict(HOST_PORTS), up)
    finally:
        compose.stop()  # down --volumes


def _logs(compose) -> tuple[str, str]:
    try:
        return compose.get_logs()
    except Exception as error:
        return "", f"(no logs: {error})"
