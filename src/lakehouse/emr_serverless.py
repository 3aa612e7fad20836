"""`lakehouse submit --emr-serverless APPLICATION`: the job as an EMR Serverless job run.

EMR Serverless brings Spark (release emr-7.2.0 or later: Spark 3.5, Scala 2.12, Hadoop 3.3
with S3A and the AWS SDK v1); the job run brings the rest, uploaded to S3 once:
- the job's Python, in a Python environment archive (`spark.archives`): the project's
  packages and their dependencies on Python 3.11, built on Amazon Linux 2023, EMR's OS, by
  services/aws/emr-serverless/Dockerfile (the release's own Python is 3.9);
- the jars EMR lacks: Hudi's Spark bundle at HUDI_VERSION, the Kinesis source, and hudi-aws
  with the AWS SDK v2 modules for the Glue sync; not hadoop-aws or the SDK v1 bundle, which
  EMR has at its own versions;
- the entry script, spark/run_job.py.
Each file goes under s3://<bucket>/emr-serverless/<sha256>/<name>, named by its content: a
second submit of the same files uploads nothing, and a job run never sees another's files.

The driver there has none of this machine's settings, so everything the job reads from its
environment here is an argument there: streams and checkpoint (as `lakehouse run` gives
them), region, catalog, database, warehouse and raw copy. Spark's settings are
services/spark/spark-defaults.conf's, resolved for the aws target, without the Hive
metastore client settings: EMR's Glue client is the Hive catalog there.

The request is written to a file and, unless it is a dry run, started with boto3 (the
default credential chain): `aws emr-serverless get-job-run` follows it.
"""

from __future__ import annotations

import hashlib
import shlex
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lakehouse import job_launcher, submit
from lakehouse.config import REPO_ROOT, Settings

ENTRY_SCRIPT = REPO_ROOT / "spark" / "run_job.py"
ARTIFACTS_PREFIX = "emr-serverless"
# EMR's own versions of these serve S3A and the Kinesis client; ours would clash with them.
EMR_PROVIDES = ("hadoop-aws-", "aws-java-sdk-bundle-")
GLUE_HIVE_CLIENT = "com.amazonaws.glue.catalog.metastore.AWSGlueDataCatalogHiveClientFactory"
NOT_ON_EMR = (
    # The sandbox's metastore client; on EMR, Glue is the Hive catalog.
    "spark.sql.hive.metastore.",
    "spark.hadoop.hive.metastore.uris",
    # EMR's own JVM options (GC, out-of-memory handling) would be replaced; the only one of
    # ours is for the Kinesis emulators, which cannot speak CBOR: AWS's Kinesis can.
    "spark.driver.extraJavaOptions",
    "spark.executor.extraJavaOptions",
)
PYTHON = "./environment/bin/python"


class EmrServerlessError(Exception):
    """The job run cannot be prepared; the message says what to fix."""


@dataclass(frozen=True)
class JobRun:
    application_id: str
    execution_role_arn: str
    python_env: str  # s3:// URI or a local archive (services/aws/emr-serverless/Dockerfile)
    name: str = "lakehouse-streaming-job"
    logs_uri: str = ""  # s3:// for the driver's and executors' logs; "" for none

    def __post_init__(self) -> None:
        if not self.execution_role_arn.startswith("arn:"):
            raise EmrServerlessError(
                f"--execution-role-arn {self.execution_role_arn!r}: the ARN of the role the job "
                "runs as (with the job's policy: `lakehouse aws-policy job`)"
            )
        if not self.python_env.startswith("s3://") and not Path(self.python_env).is_file():
            raise EmrServerlessError(
                f"--python-env {self.python_env!r}: no such archive. Build it with "
                "`docker build --output . -f services/aws/emr-serverless/Dockerfile .` "
                "(docs/aws.md), or give its s3:// URI"
            )


def emr_jars(settings: Settings) -> list[Path]:
    return [
        jar for jar in job_launcher.spark_jars(settings) if not jar.name.startswith(EMR_PROVIDES)
    ]


def artifact_key(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as file:
        for block in iter(lambda: file.read(1 << 20), b""):
            digest.update(block)
    return f"{ARTIFACTS_PREFIX}/{digest.hexdigest()[:16]}/{path.name}"


def upload(s3: Any, bucket: str, paths: Sequence[Path], progress=print) -> dict[Path, str]:
    """Each file's s3:// URI, uploaded unless an object of that content is there already."""
    uris = {}
    for path in paths:
        key = artifact_key(path)
        try:
            s3.head_object(Bucket=bucket, Key=key)
        except s3.exceptions.ClientError:
            progress(f"  uploading {path.name} to s3://{bucket}/{key}")
            s3.upload_file(str(path), bucket, key)
        uris[path] = f"s3://{bucket}/{key}"
    return uris


def spark_conf(env: Mapping[str, str], jars: Sequence[str], python_env: str) -> dict[str, str]:
    """The job run's Spark settings: spark-defaults.conf resolved against the aws target's
    `env`, the Glue catalog, the jars and the Python environment."""
    conf = {
        key: submit.resolve_env_refs(value, env)
        for key, value in submit.spark_defaults().items()
        if not key.startswith(NOT_ON_EMR)
    }
    conf.update(
        {
            "spark.hadoop.hive.metastore.client.factory.class": GLUE_HIVE_CLIENT,
            "spark.jars": ",".join(jars),
            "spark.archives": f"{python_env}#environment",
            "spark.emr-serverless.driverEnv.PYSPARK_DRIVER_PYTHON": PYTHON,
            "spark.emr-serverless.driverEnv.PYSPARK_PYTHON": PYTHON,
            "spark.executorEnv.PYSPARK_PYTHON": PYTHON,
        }
    )
    return conf


def remote_job_args(settings: Settings, local_args: Sequence[str]) -> list[str]:
    """`lakehouse run`'s arguments (job_launcher.default_job_args, then the user's) for a
    driver that has none of this machine's settings or files."""
    if any(arg == "--tables" or arg.startswith("--tables=") for arg in local_args):
        raise EmrServerlessError(
            "--tables names a file on this machine, which the driver on EMR cannot read: "
            "put your tables file in the Python environment (the Dockerfile's TABLES "
            "argument), whose job reads it by default"
        )
    args = list(local_args)
    status = args.index("--status-file") if "--status-file" in args else -1
    if status >= 0:  # a file on this machine: `lakehouse status` reads it here
        del args[status : status + 2]
    bucket, database = settings["LAKEHOUSE_BUCKET"], settings["LAKEHOUSE_DATABASE"]
    explicit = [
        *("--region", settings["AWS_REGION"]),
        *("--catalog", settings["LAKEHOUSE_CATALOG"]),
        *("--database", database),
        *("--warehouse", f"s3a://{bucket}/warehouse/{database}.db"),
        *("--raw", f"s3a://{bucket}/raw"),
        # Another job run on the same checkpoint, from any host, is refused.
        "--writer-lease",
    ]
    for option, value in (
        ("--kinesis-endpoint", settings.kinesis_endpoint),
        ("--glue-endpoint", settings.glue_endpoint),
        ("--trino-url", settings.trino_url),
    ):
        if value:
            explicit += [option, value]
    return [*explicit, *args]


def job_run_request(
    run: JobRun,
    entry_point: str,
    job_args: Sequence[str],
    conf: Mapping[str, str],
    client_token: str,
) -> dict[str, Any]:
    """StartJobRun's request (boto3's emr-serverless client, the AWS CLI's --cli-input-json)."""
    request: dict[str, Any] = {
        "applicationId": run.application_id,
        "executionRoleArn": run.execution_role_arn,
        "name": run.name,
        "clientToken": client_token,
        "jobDriver": {
            "sparkSubmit": {
                "entryPoint": entry_point,
                "entryPointArguments": list(job_args),
                "sparkSubmitParameters": " ".join(
                    f"--conf {shlex.quote(f'{key}={value}')}" for key, value in conf.items()
                ),
            }
        },
    }
    if run.logs_uri:
        request["configurationOverrides"] = {
            "monitoringConfiguration": {"s3MonitoringConfiguration": {"logUri": run.logs_uri}}
        }
    return request


def prepare(
    settings: Settings, run: JobRun, local_args: Sequence[str], s3: Any, progress=print
) -> dict[str, Any]:
    """Upload what the job run needs and return its request."""
    if settings.target != "aws":
        raise EmrServerlessError(
            "EMR Serverless runs against AWS: set LAKEHOUSE_TARGET=aws (docs/aws.md)"
        )
    if settings["LAKEHOUSE_CATALOG"] == "hive" and not settings.hms_uri:
        raise EmrServerlessError("the job's catalog is Hive without a metastore: use glue")
    args = remote_job_args(settings, local_args)
    jars = emr_jars(settings)
    files = [ENTRY_SCRIPT, *jars]
    if not run.python_env.startswith("s3://"):
        files.append(Path(run.python_env))
    uris = upload(s3, settings["LAKEHOUSE_BUCKET"], files, progress)
    python_env = uris.get(Path(run.python_env), run.python_env)
    conf = spark_conf(settings.service_env(), [uris[j] for j in jars], python_env)
    # One per submit: boto3 retries the call with it, and a later submit (a restart after
    # the job stopped) is a new job run, not the old one returned.
    return job_run_request(run, uris[ENTRY_SCRIPT], args, conf, uuid.uuid4().hex)
