"""The stack in containers, for tests marked `containers` (make integration-test).

Session fixtures, in order: a Docker engine and Compose v2 (lakehouse.compose.engine:
started, and stopped at the end, only where none was running and nothing manages
one), the images no registry serves here (lakehouse.compose.images), and a fresh
clone of the repository. Each test module then brings up its own stack from that
clone with testcontainers' DockerCompose: plain `docker compose up`, no env file, no
staging, on host ports that do not clash with a running local stack. Nothing here
skips: when the engine cannot be started the tests fail with the reason.
testcontainers is imported lazily so that collecting other suites never needs it.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
import urllib.request
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from lakehouse.compose import ComposeError, engine, images, project
from lakehouse.core.config import REPO_ROOT, Settings, load_settings

# Host ports for the tests' stacks (the local stack may hold the defaults).
HOST_PORTS = {
    "KINESIS_HOST_PORT": 14566,
    "MINIO_HOST_PORT": 19000,
    "MINIO_CONSOLE_HOST_PORT": 19001,
    "HMS_HOST_PORT": 19083,
    "TRINO_HOST_PORT": 18080,
    "SPARK_MASTER_UI_HOST_PORT": 18090,
    "JOB_UI_HOST_PORT": 14040,
    "LOCUST_HOST_PORT": 18089,
    "JUPYTER_HOST_PORT": 18888,
    "CDC_PG_HOST_PORT": 15433,
    "PROMETHEUS_HOST_PORT": 19090,
    "GRAFANA_HOST_PORT": 13000,
}
# The services a job that falls behind is read by.
JOB_SIDE = ("job", "spark-master", "spark-worker")


def say(message: str) -> None:
    print(message, flush=True)


@pytest.fixture(scope="session")
def settings() -> Settings:
    return load_settings()


@pytest.fixture(scope="session")
def docker_engine(settings: Settings) -> Iterator[None]:
    try:
        started = engine.ensure_engine(settings, say)
        engine.ensure_compose(settings, say)
    except ComposeError as error:
        pytest.fail(f"no Docker engine could be started: {error}", pytrace=False)
    try:
        yield
    finally:
        if started:
            engine.stop_engine(settings, say)


@pytest.fixture(scope="session")
def prepared(docker_engine: None, settings: Settings) -> dict[str, str]:
    started = time.monotonic()
    try:
        report = project.prepare(settings, say)
    except ComposeError as error:
        pytest.fail(f"images could not be prepared: {error}", pytrace=False)
    say(f"prepared in {time.monotonic() - started:.0f}s")
    return report


@pytest.fixture(scope="session")
def clone(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh clone of the repository (its committed state): what a new user has."""
    target = tmp_path_factory.mktemp("clone") / "lakehouse"
    subprocess.run(["git", "clone", "--quiet", str(REPO_ROOT), str(target)], check=True)
    return target


@dataclass
class Stack:
    """A running compose project of the clone, and how to reach it."""

    directory: Path
    project_name: str
    up_seconds: float
    ports: dict[str, int] = field(default_factory=lambda: dict(HOST_PORTS))
    profiles: tuple[str, ...] = ()  # compose profiles beside the default services (cdc)

    def env(self) -> dict[str, str]:
        return {
            **os.environ,
            **{k: str(v) for k, v in self.ports.items()},
            "COMPOSE_PROJECT_NAME": self.project_name,
            "COMPOSE_PROFILES": ",".join(self.profiles),
        }

    def compose(self, *args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["docker", "compose", *args],
            cwd=self.directory,
            env=self.env(),
            capture_output=True,
            text=True,
            timeout=timeout,
        )

    def url(self, port_key: str, path: str = "/") -> str:
        return f"http://127.0.0.1:{self.ports[port_key]}{path}"

    def get_json(self, port_key: str, path: str) -> object:
        with urllib.request.urlopen(self.url(port_key, path), timeout=10) as response:
            return json.loads(response.read())

    def diagnosis(self, services: Sequence[str] = JOB_SIDE, tail: int = 80) -> str:
        """What a failed check needs to be read: every container's state and restarts, and
        the last log lines of the services named (by default the job's side; all when
        none are)."""
        states = self.compose("ps", "-a", "--format", "{{.Service}} {{.State}} {{.Status}}")
        logs = self.compose("logs", "--no-color", f"--tail={tail}", *services)
        return f"containers:\n{states.stdout}\nlogs:\n{logs.stdout[-12000:]}{logs.stderr[-2000:]}"

    def down(self) -> subprocess.CompletedProcess[str]:
        """docker compose down -v: containers, network and volumes of the project."""
        return self.compose("down", "-v", "--remove-orphans", timeout=300)

    def resources(self) -> dict[str, list[str]]:
        """The project's containers, networks and volumes (by compose's project label)."""
        label = f"label=com.docker.compose.project={self.project_name}"
        found = {}
        for kind, cmd in (
            ("containers", ["docker", "ps", "-aq", "--filter", label]),
            ("networks", ["docker", "network", "ls", "-q", "--filter", label]),
            ("volumes", ["docker", "volume", "ls", "-q", "--filter", label]),
        ):
            out = subprocess.run(cmd, capture_output=True, text=True, check=True)
            found[kind] = out.stdout.split()
        return found


@pytest.fixture(scope="session")
def start_stack(prepared: dict[str, str], clone: Path):
    """Start a stack of the clone with testcontainers: `docker compose up --build --wait
    [ARGS]`; `Stack.down` (docker compose down -v) is the caller's to run."""
    from testcontainers.compose import DockerCompose

    def start(project_name: str, *up_args: str, profiles: tuple[str, ...] = ()) -> Stack:
        stack = Stack(clone, project_name, 0.0, profiles=profiles)
        os.environ.update({k: str(v) for k, v in stack.ports.items()})
        os.environ["COMPOSE_PROJECT_NAME"] = project_name
        compose = DockerCompose(
            context=str(clone),
            compose_file_name="docker-compose.yml",
            build=True,  # our images from the clone's sources (cached layers when unchanged)
            wait=True,
            # DockerCompose appends `services` to its `up` command (and to nothing else
            # that this module runs): the place for --scale arguments.
            services=list(up_args) or None,
            profiles=list(profiles) or None,
        )
        started = time.monotonic()
        try:
            compose.start()
        except Exception:
            logs = stack.compose("logs", "--tail=60").stdout
            stack.down()
            pytest.fail(f"{project_name} did not become healthy; logs:\n{logs[-10000:]}")
        stack.up_seconds = time.monotonic() - started
        rows = project.services()
        say(f"\n{project_name} healthy in {stack.up_seconds:.0f}s\n{project.format_table(rows)}")
        say(f"memory of the stack: {sum(r.memory_mib or 0 for r in rows):,.0f} MiB")
        sizes = images.image_sizes(sorted({*prepared, *_our_images(stack)}))
        say("images: " + ", ".join(f"{n} {s / 1e6:,.0f} MB" for n, s in sizes.items()))
        return stack

    return start


def _our_images(stack: Stack) -> set[str]:
    out = stack.compose("config", "--images")
    return {name for name in out.stdout.split() if name.startswith("lakehouse/")}
