"""services/spark/entrypoint.sh's Kubernetes roles, as Spark's pods start them: the driver
runs the job's script with python as the parent (its submit arguments in
PYSPARK_SUBMIT_ARGS), an executor starts Spark's Kubernetes executor backend from its
environment. Run with stand-ins for python and java that print what they were given."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from lakehouse.core.config import REPO_ROOT

pytestmark = pytest.mark.unit

ENTRYPOINT = REPO_ROOT / "services" / "spark" / "entrypoint.sh"
PRINT_ARGS = (
    'import json, os, sys; print(json.dumps({"argv": sys.argv[1:], "env": dict(os.environ)}))'
)


def stand_in(folder: Path, name: str, command: str) -> None:
    path = folder / name
    path.write_text(f"#!/bin/bash\n{command}\n")
    path.chmod(0o755)


def run_role(tmp_path: Path, args: list[str], env: dict[str, str]) -> dict:
    bin_dir = tmp_path / "bin"
    (tmp_path / "java" / "bin").mkdir(parents=True)
    bin_dir.mkdir()
    # The driver execs `python SCRIPT ARGS`; the executor `$JAVA_HOME/bin/java ARGS`.
    stand_in(bin_dir, "python", f'exec {sys.executable} -c {shlex.quote(PRINT_ARGS)} "$@"')
    stand_in(tmp_path / "java" / "bin", "java", f'exec {bin_dir}/python "$@"')
    base = {"PATH": f"{bin_dir}:/usr/bin:/bin", "JAVA_HOME": str(tmp_path / "java")}
    done = subprocess.run(
        ["bash", str(ENTRYPOINT), *args],
        env={**base, "SPARK_HOME": "/opt/spark-home", **env},
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_the_driver_runs_the_script_with_its_submit_arguments(tmp_path: Path) -> None:
    args = [
        "driver",
        *("--properties-file", "/opt/spark/conf/spark.properties"),
        *("--class", "org.apache.spark.deploy.PythonRunner"),
        "local:///opt/lakehouse/run_job.py",
        *("--catalog", "glue", "--writer-lease"),
    ]
    ran = run_role(tmp_path, args, {"SPARK_DRIVER_BIND_ADDRESS": "10.1.2.3"})
    # python SCRIPT JOB_ARGS: the stand-in sees the script first.
    assert ran["argv"] == ["/opt/lakehouse/run_job.py", "--catalog", "glue", "--writer-lease"]
    assert shlex.split(ran["env"]["PYSPARK_SUBMIT_ARGS"]) == [
        *("--deploy-mode", "client", "--conf", "spark.driver.bindAddress=10.1.2.3"),
        *("--properties-file", "/opt/spark/conf/spark.properties"),
        "pyspark-shell",
    ]


def test_an_executor_starts_the_kubernetes_backend_from_its_environment(tmp_path: Path) -> None:
    env = {
        "SPARK_JAVA_OPT_1": "-Dsecond=2",
        "SPARK_JAVA_OPT_0": "-Dfirst=1 with space",
        "SPARK_JAVA_OPT_10": "-Dtenth=10",
        "SPARK_EXECUTOR_MEMORY": "1024m",
        "SPARK_CLASSPATH": "/opt/lakehouse/jars/*",
        "SPARK_DRIVER_URL": "spark://CoarseGrainedScheduler@driver-svc:7078",
        "SPARK_EXECUTOR_ID": "3",
        "SPARK_EXECUTOR_CORES": "2",
        "SPARK_APPLICATION_ID": "spark-abc",
        "SPARK_EXECUTOR_POD_IP": "10.1.2.4",
        "SPARK_EXECUTOR_POD_NAME": "job-exec-3",
        "SPARK_CONF_DIR": "/opt/spark/conf",
    }
    argv = run_role(tmp_path, ["executor"], env)["argv"]
    assert argv[:5] == [
        "-Dfirst=1 with space",
        "-Dsecond=2",
        "-Dtenth=10",
        "-Xms1024m",
        "-Xmx1024m",
    ]
    assert argv[5:7] == ["-cp", "/opt/spark/conf:/opt/lakehouse/jars/*:/opt/spark-home/jars/*"]
    assert argv[7] == "org.apache.spark.scheduler.cluster.k8s.KubernetesExecutorBackend"
    options = dict(zip(argv[8::2], argv[9::2], strict=True))
    assert options == {
        "--driver-url": env["SPARK_DRIVER_URL"],
        "--executor-id": "3",
        "--cores": "2",
        "--app-id": "spark-abc",
        "--hostname": "10.1.2.4",
        "--resourceProfileId": "0",
        "--podName": "job-exec-3",
    }
