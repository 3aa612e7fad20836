"""A Spark standalone cluster of two processes, a master and a worker (pyspark's own
spark-class), on loopback: what `lakehouse submit` sends executors to in tests. The worker's
environment is its host's: the executors it starts inherit it (credentials, region)."""

from __future__ import annotations

import json
import subprocess
import time
import urllib.request
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pyspark

from lakehouse.local import installers
from lakehouse.local.job_launcher import QUICK_JIT
from tests.support.leftovers import owner_marks
from tests.support.ports import free_port

SPARK_CLASS = Path(pyspark.__file__).parent / "bin" / "spark-class"


@dataclass(frozen=True)
class SparkCluster:
    master: str
    ui: str
    work_dir: Path  # the worker's: work/<application id>/<executor id>/stderr

    def state(self) -> dict:
        with urllib.request.urlopen(f"{self.ui}/json/", timeout=5) as response:
            return json.loads(response.read())


@contextmanager
def spark_cluster(
    folder: Path, host_env: Mapping[str, str], cores: int = 1, memory: str = "1g"
) -> Iterator[SparkCluster]:
    folder.mkdir(parents=True, exist_ok=True)
    port, ui_port, worker_ui = free_port(), free_port(), free_port()
    cluster = SparkCluster(
        f"spark://127.0.0.1:{port}", f"http://127.0.0.1:{ui_port}", folder / "work"
    )
    env = {
        **host_env,
        **owner_marks(),
        "JAVA_HOME": str(installers.spark_java_home()),
        "SPARK_LOCAL_IP": "127.0.0.1",
        "SPARK_WORKER_DIR": str(cluster.work_dir),
        "SPARK_LOG_DIR": str(folder),
        # Master and worker live as long as a test: C1 only, as the tests' jobs.
        "SPARK_DAEMON_JAVA_OPTS": QUICK_JIT,
    }
    processes = []
    try:
        for name, args in (
            (
                "master",
                [
                    "org.apache.spark.deploy.master.Master",
                    "--host",
                    "127.0.0.1",
                    "--port",
                    str(port),
                    "--webui-port",
                    str(ui_port),
                ],
            ),
            (
                "worker",
                [
                    "org.apache.spark.deploy.worker.Worker",
                    "--host",
                    "127.0.0.1",
                    "--cores",
                    str(cores),
                    "--memory",
                    memory,
                    "--webui-port",
                    str(worker_ui),
                    cluster.master,
                ],
            ),
        ):
            with (folder / f"{name}.log").open("wb") as log:
                processes.append(
                    subprocess.Popen(
                        [str(SPARK_CLASS), *args], env=env, stdout=log, stderr=subprocess.STDOUT
                    )
                )
        _wait_for_worker(cluster, processes, folder)
        yield cluster
    finally:
        for process in reversed(processes):
            process.terminate()
        for process in processes:
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()


def _wait_for_worker(cluster: SparkCluster, processes: list, folder: Path) -> None:
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        if any(p.poll() is not None for p in processes):
            break
        try:
            if cluster.state().get("aliveworkers", 0) >= 1:
                return
        except OSError:
            pass
        time.sleep(0.5)
    logs = {p.name: p.read_text()[-2000:] for p in folder.glob("*.log")}
    raise AssertionError(f"the Spark cluster did not come up with a worker: {logs}")
