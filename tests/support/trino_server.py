"""A Trino of a test's own (the installed Trino, another port and data folder) with the
catalogs the test gives it: the local stack's Trino keeps its own."""

from __future__ import annotations

import shutil
import subprocess
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

from lakehouse.core.clients import Endpoints, trino_connection
from lakehouse.core.config import SERVICES_DIR, Settings
from lakehouse.local import installers
from lakehouse.local.job_launcher import QUICK_JIT
from tests.support.leftovers import owner_marks
from tests.support.ports import free_port


@contextmanager
def trino_server(
    settings: Settings,
    folder: Path,
    catalogs: Mapping[str, str],
    host_env: Mapping[str, str],
    jvm_options: Sequence[str] = (),
) -> Iterator[Endpoints]:
    """Trino on loopback with `catalogs` (name -> properties), its process environment
    `host_env` (its host's: credentials, region) and extra JVM options."""
    etc = folder / "etc"
    shutil.copytree(SERVICES_DIR / "trino" / "etc", etc, ignore=shutil.ignore_patterns("catalog"))
    (etc / "catalog").mkdir()
    for name, properties in catalogs.items():
        (etc / "catalog" / f"{name}.properties").write_text(properties)
    with (etc / "jvm.config").open("a") as jvm:
        # It lives as long as a test: C1 only, as the tests' jobs (measured on the AWS
        # simulation's Trino: 45 -> 26 CPU-s).
        jvm.writelines(f"{option}\n" for option in [*jvm_options, QUICK_JIT])
    node = (etc / "node.properties").read_text().replace("node.id=lakehouse-trino", "node.id=e2e")
    (etc / "node.properties").write_text(node)
    port = free_port()
    java_home = installers.trino_java_home(settings)
    env = {
        **host_env,
        **owner_marks(),
        "JAVA_HOME": str(java_home),
        "PATH": f"{java_home / 'bin'}:/usr/bin:/bin",
        "TRINO_PORT": str(port),
        "TRINO_BIND_IP": "127.0.0.1",
        "TRINO_INTERNAL_ADDRESS": "127.0.0.1",
    }
    home = installers.ensure_trino(settings)
    log = (folder / "trino.log").open("wb")
    process = subprocess.Popen(
        [
            str(home / "bin" / "launcher"),
            "run",
            f"--etc-dir={etc}",
            f"--data-dir={folder / 'data'}",
        ],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    endpoints = Endpoints(region="us-east-1", trino=f"http://127.0.0.1:{port}")
    try:
        _wait_until_ready(endpoints, process, folder / "trino.log")
        yield endpoints
    finally:
        process.terminate()
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()
        log.close()


def _wait_until_ready(endpoints: Endpoints, process: subprocess.Popen, log: Path) -> None:
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline and process.poll() is None:
        try:
            cursor = trino_connection(endpoints, catalog="system", request_timeout_s=5).cursor()
            cursor.execute("SELECT count(*) FROM system.runtime.nodes WHERE state = 'active'")
            if cursor.fetchall() == [[1]]:
                return
        except Exception:  # starting: refused, or not yet serving queries
            pass
        time.sleep(1)
    raise AssertionError(f"Trino did not start: {log.read_text(errors='replace')[-3000:]}")
