"""`lakehouse submit --master k8s://https://HOST:PORT`: the job as a Spark application on
Kubernetes, its driver and executors pods of the sandbox's Spark image, started by Spark's
own spark-submit in cluster mode (with the submitter's kubeconfig, as kubectl).

The pods run the image given with `--image` (services/spark/Dockerfile's `spark` stage,
pushed where the cluster pulls from): Spark, the job's Python package, its jars at
/opt/lakehouse/jars and the Glue sync's at /opt/lakehouse/glue-jars, the entry script
spark/run_job.py, and the entrypoint's `driver` and `executor` roles that Spark starts its
pods with. What the image lacks is sent with the application:
- the pod templates of services/spark/kubernetes/ (labels, the graceful stop's grace time);
- Spark's settings: services/spark/spark-defaults.conf resolved against this target's
  settings (as for a standalone cluster or EMR), the image's jars as class path;
- the job's arguments as for EMR (lakehouse.aws.emr.remote_job_args): the driver pod has none of
  this machine's settings or files.
Nothing is uploaded (jars in spark.jars would be: spark-submit resolves remote ones on the
submitting machine, which then needs S3A and the bucket's credentials).
Credentials in the pods come from their default provider chain: a service account bound to
an IAM role (EKS's IAM roles for service accounts or Pod Identity), never keys in the
configuration. Spark does not wait for the application (a streaming job never ends): the
submit returns once the driver pod is created, and kubectl follows it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from lakehouse.aws import emr, submit
from lakehouse.core.config import REPO_ROOT, Settings
from lakehouse.local import installers

APP_NAME = "lakehouse-streaming-job"
TEMPLATES = REPO_ROOT / "services" / "spark" / "kubernetes"
DRIVER_TEMPLATE = TEMPLATES / "driver-pod-template.yaml"
EXECUTOR_TEMPLATE = TEMPLATES / "executor-pod-template.yaml"
# Where services/spark/Dockerfile puts the jars and the entry script.
IMAGE_JARS = "/opt/lakehouse/jars/*"
IMAGE_GLUE_JARS = "/opt/lakehouse/glue-jars/*"
ENTRY_POINT = "local:///opt/lakehouse/run_job.py"
_NAME = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")  # a Kubernetes (DNS-1123) name


@dataclass(frozen=True)
class KubernetesRun:
    master: str  # k8s://https://host:port
    image: str
    namespace: str = "default"
    service_account: str = "lakehouse-job"
    executors: int = 1
    executor_memory: str = "1g"
    driver_memory: str = "1g"

    def __post_init__(self) -> None:
        if not self.master.startswith("k8s://"):
            raise submit.SubmitError(f"--master {self.master!r}: not a k8s:// URL")
        if not self.image:
            raise submit.SubmitError(
                "Kubernetes needs --image: the lakehouse/spark image pushed where the cluster "
                "pulls from (docs/aws.md, Spark on Kubernetes)"
            )
        names = (("--namespace", self.namespace), ("--service-account", self.service_account))
        for option, name in names:
            if not _NAME.fullmatch(name):
                raise submit.SubmitError(f"{option} {name!r}: not a Kubernetes name")
        if self.executors < 1:
            raise submit.SubmitError(f"--executors {self.executors}: at least 1")


def spark_conf(settings: Settings, run: KubernetesRun) -> dict[str, str]:
    """The application's Spark settings: spark-defaults.conf resolved for this target, the
    image's class path, the pods' image, account and templates."""
    conf = submit.resolved_spark_defaults(settings.service_env())
    jars = (
        [IMAGE_JARS, IMAGE_GLUE_JARS] if settings["LAKEHOUSE_CATALOG"] == "glue" else [IMAGE_JARS]
    )
    conf.update(
        {
            "spark.kubernetes.container.image": run.image,
            "spark.kubernetes.namespace": run.namespace,
            "spark.kubernetes.authenticate.driver.serviceAccountName": run.service_account,
            "spark.kubernetes.driver.podTemplateFile": str(DRIVER_TEMPLATE),
            "spark.kubernetes.executor.podTemplateFile": str(EXECUTOR_TEMPLATE),
            # A streaming job does not end: return once the driver pod exists.
            "spark.kubernetes.submission.waitAppCompletion": "false",
            "spark.executor.instances": str(run.executors),
            "spark.executor.memory": run.executor_memory,
            "spark.driver.memory": run.driver_memory,
            "spark.driver.extraClassPath": ":".join(jars),
            "spark.executor.extraClassPath": ":".join(jars),
        }
    )
    return conf


def submit_command(
    run: KubernetesRun, conf: Mapping[str, str], job_args: Sequence[str]
) -> list[str]:
    """spark-submit's command line (pyspark's own), in cluster mode."""
    spark_submit = installers.pyspark_home() / "bin" / "spark-submit"
    settings = [arg for key, value in conf.items() for arg in ("--conf", f"{key}={value}")]
    return [
        *(str(spark_submit), "--master", run.master, "--deploy-mode", "cluster"),
        *("--name", APP_NAME),
        *settings,
        ENTRY_POINT,
        *job_args,
    ]


def prepare(settings: Settings, run: KubernetesRun, local_args: Sequence[str]) -> list[str]:
    """Check that the job can run there; the spark-submit command that starts it."""
    if settings["LAKEHOUSE_CATALOG"] == "hive" and not settings.hms_uri:
        raise submit.SubmitError("the job's catalog is Hive without a metastore: use glue")
    if emr.names_tables_file(local_args):
        raise submit.SubmitError(
            "--tables names a file on this machine, which the driver's pod cannot read: "
            "build the image with your tables file as src/lakehouse_tables/tables.yaml, "
            "which the job reads by default"
        )
    job_args = emr.remote_job_args(settings, local_args)
    return submit_command(run, spark_conf(settings, run), job_args)


def follow_hint(run: KubernetesRun) -> str:
    selector = f"spark-role=driver,spark-app-name={APP_NAME}"
    return f"kubectl -n {run.namespace} logs -f -l {selector}"
