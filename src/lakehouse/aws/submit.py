"""`lakehouse submit`: the job's driver on this machine, its executors on a Spark standalone
cluster (`spark://host:7077`): the sandbox's own, or one the user names.

The executors get everything as Spark configuration from the driver, nothing from their
hosts' environment but credentials and the job's jars:
- the S3A and metastore settings of services/spark/spark-defaults.conf, whose
  `${env.NAME}` references Hadoop would otherwise resolve against each executor host's
  environment, are resolved here and passed as literal `--conf` values (Spark redacts the
  keys among them in its UI and logs);
- the JVM options, with the truststore of AWS_CA_BUNDLE when one is set (its path must
  exist on the hosts, as the jars' do);
- the jars: at the same paths on every host (a class path, as the sandbox's images have
  them), or shipped from the driver with `--ship-jars` (~400 MB per executor start).
Credentials on the executors come from their hosts' default provider chain (an instance or
container role), as on EMR or EKS.
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from lakehouse.core.config import Settings
from lakehouse.local import job_launcher

SPARK_DEFAULTS = job_launcher.SPARK_DEFAULTS
# Hadoop's forms: ${env.NAME}, ${env.NAME:-default} (unset or empty), ${env.NAME-default}.
_ENV_REF = re.compile(r"\$\{env\.([A-Za-z_][A-Za-z0-9_]*)(?:(:?-)([^}]*))?\}")


class SubmitError(Exception):
    """The cluster submission cannot be prepared; the message says what to fix."""


@dataclass(frozen=True)
class Cluster:
    master: str  # spark://host:port
    total_executor_cores: int = 1
    executor_memory: str = "1g"
    driver_host: str = "127.0.0.1"  # the address executors reach the driver at
    ship_jars: bool = False

    def __post_init__(self) -> None:
        if not self.master.startswith("spark://"):
            raise SubmitError(
                f"--master {self.master!r}: a standalone master's URL, spark://host:7077, or "
                "Kubernetes', k8s://https://host:port (EMR: --emr-serverless, --emr-cluster)"
            )


def spark_defaults(path: Path = SPARK_DEFAULTS) -> dict[str, str]:
    settings = {}
    for line in path.read_text().splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            key, _, value = line.partition(" ")
            settings[key] = value.strip()
    return settings


def resolved_spark_defaults(
    env: Mapping[str, str], leave_out: tuple[str, ...] = ()
) -> dict[str, str]:
    """spark-defaults.conf with every ${env.NAME} resolved from `env`, for a driver that
    has none of this machine's environment (EMR, Kubernetes); keys starting with one of
    `leave_out` are left out."""
    return {
        key: resolve_env_refs(value, env)
        for key, value in spark_defaults().items()
        if not key.startswith(leave_out)
    }


def resolve_env_refs(value: str, env: Mapping[str, str]) -> str:
    """`value` with Hadoop's ${env.NAME} references replaced from `env`."""

    def one(match: re.Match[str]) -> str:
        name, form, default = match.group(1), match.group(2), match.group(3) or ""
        found = env.get(name)
        if form == ":-" and not found:
            return default
        if form == "-" and found is None:
            return default
        if found is None:
            raise SubmitError(
                f"{SPARK_DEFAULTS.name} refers to ${{env.{name}}}, which is not set: "
                "the settings (services/*.env) define it in every mode"
            )
        return found

    return _ENV_REF.sub(one, value)


def executor_conf(
    env: Mapping[str, str], defaults: Mapping[str, str], trust_options: str = ""
) -> dict[str, str]:
    """What the executors must get from the driver (see the module's docstring);
    `trust_options`: the JVM options of AWS_CA_BUNDLE's truststore, if any. The job's JIT
    setting (job_launcher.JIT_ENV) in `env` reaches them too."""
    conf = {
        key: resolve_env_refs(value, env)
        for key, value in defaults.items()
        if key.startswith("spark.hadoop.") and "${env." in value
    }
    options = [
        defaults.get("spark.executor.extraJavaOptions", ""),
        job_launcher.jit_options(env),
        trust_options,
    ]
    conf["spark.executor.extraJavaOptions"] = " ".join(o for o in options if o)
    return conf


def cluster_env(settings: Settings, cluster: Cluster, driver_memory: str = "") -> dict[str, str]:
    """The driver's environment (job_launcher.job_env) with the cluster's submit arguments."""
    env = job_launcher.job_env(settings, driver_memory)
    jars = [str(j) for j in job_launcher.spark_jars(settings)]
    args = [
        *("--master", cluster.master, "--deploy-mode", "client"),
        *("--driver-memory", driver_memory or settings["SPARK_DRIVER_MEMORY"]),
        *("--executor-memory", cluster.executor_memory),
        *("--total-executor-cores", str(cluster.total_executor_cores)),
        *("--driver-class-path", os.pathsep.join(jars)),
        *("--properties-file", str(SPARK_DEFAULTS)),
        *("--conf", f"spark.driver.host={cluster.driver_host}"),
    ]
    if cluster.driver_host not in ("127.0.0.1", "localhost"):
        env.pop("SPARK_LOCAL_IP", None)  # reachable from the cluster's hosts
        args += ["--conf", "spark.driver.bindAddress=0.0.0.0"]
    if cluster.ship_jars:
        args += ["--jars", ",".join(jars)]
    else:
        args += ["--conf", f"spark.executor.extraClassPath={os.pathsep.join(jars)}"]
    trust = job_launcher.trust_options(settings)
    for key, value in executor_conf(env, spark_defaults(), trust).items():
        args += ["--conf", f"{key}={value}"]
    env["PYSPARK_SUBMIT_ARGS"] = " ".join(shlex.quote(a) for a in [*args, "pyspark-shell"])
    return env
