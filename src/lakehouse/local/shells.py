"""Interactive ways into the local stack: `lakehouse sql`, `spark-sql`, `notebook`.

- sql: Trino's CLI (the jar of the server's version, from Maven Central) on the stack's
  Trino, catalog `hive` and the lakehouse database: the live views (`orders`, ...), the
  raw JSON tables (`orders_json`, ...), and `hudi.lakehouse.*` for the Hudi tables.
- spark-sql: Spark SQL with Hudi, for what Trino cannot do (MoR snapshots `_rt`, time
  travel, incremental reads, `call show_commits(...)`): the job's jars and
  spark-defaults.conf, the metastore's database.
- notebook: JupyterLab on 127.0.0.1:8888 over notebooks/, with a kernel environment in
  which `SparkSession.builder.getOrCreate()` gets the job's jars and config; the stack
  and the job are started first when they are not running.
"""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
from collections.abc import Callable, Sequence

from lakehouse.core.config import REPO_ROOT, Settings
from lakehouse.local import demo, installers, job_launcher, stack

Progress = Callable[[str], None]
NOTEBOOKS_DIR = REPO_ROOT / "notebooks"
NOTEBOOK_PORT = 8888


def trino_cli_command(settings: Settings, args: Sequence[str] = ()) -> list[str]:
    jar = installers.ensure_trino_cli(settings)
    java = installers.trino_java_home(settings) / "bin" / "java"
    return [
        str(java),
        "-jar",
        str(jar),
        "--server",
        settings.trino_url,
        "--catalog",
        "hive",
        "--schema",
        settings["LAKEHOUSE_DATABASE"],
        "--user",
        os.environ.get("USER", "lakehouse"),
        *args,
    ]


def spark_sql_command(settings: Settings, args: Sequence[str] = ()) -> list[str]:
    classpath = os.pathsep.join(str(jar) for jar in job_launcher.spark_jars(settings))
    return [
        str(installers.pyspark_home() / "bin" / "spark-sql"),
        "--master",
        "local[2]",
        "--driver-memory",
        "1g",
        "--driver-class-path",
        classpath,
        # job_env's SPARK_CONF_DIR is empty (lakehouse.local.class_archive).
        "--properties-file",
        str(job_launcher.SPARK_DEFAULTS),
        "--conf",
        "spark.ui.port=4050",
        "--database",
        settings["LAKEHOUSE_DATABASE"],
        *args,
    ]


def spark_env(settings: Settings) -> dict[str, str]:
    return job_launcher.job_env(settings, driver_memory="1g")


def notebook_env(settings: Settings) -> dict[str, str]:
    """A kernel's environment: the job's Spark settings and the stack's endpoints (what
    notebooks/lakehouse_lab.py and SparkSession read), the notebooks folder on the path."""
    env = spark_env(settings)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(NOTEBOOKS_DIR), env.get("PYTHONPATH")]))
    return env


def ensure_pipeline(settings: Settings, progress: Progress) -> None:
    """The stack and the job, started only if they are not running."""
    if not all(row.state == "running" for row in stack.statuses(settings)):
        stack.up(settings, progress)
    if not stack.supervisor_for(settings).is_running(stack.JOB):
        progress("Starting the streaming job in the background")
        demo.start_job(settings, progress)


def run_notebook_server(settings: Settings, progress: Progress, port: int = NOTEBOOK_PORT) -> int:
    ensure_pipeline(settings, progress)
    token = secrets.token_hex(16)
    progress(f"\nJupyterLab: http://127.0.0.1:{port}/lab?token={token}")
    progress("(Ctrl-C stops it; the stack and the job keep running: `make local-down`)\n")
    command = [
        sys.executable,
        "-m",
        "jupyterlab",
        "--no-browser",
        "--ip=127.0.0.1",
        f"--port={port}",
        f"--ServerApp.root_dir={NOTEBOOKS_DIR}",
        f"--IdentityProvider.token={token}",
    ]
    try:
        return subprocess.call(command, env=notebook_env(settings))
    except KeyboardInterrupt:
        return 0
