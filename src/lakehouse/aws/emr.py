"""What any EMR deployment of the job needs, whichever way it is started.

EMR (release emr-7.2.0 or later: Spark 3.5, Scala 2.12, Hadoop 3.3 with S3A and the AWS SDK
v1, Amazon Linux 2023) brings Spark; the job brings the rest, uploaded to S3 once:
- the job's Python, in a Python environment archive (`spark.archives`): the project's
  packages and their dependencies on Python 3.11, built on Amazon Linux 2023 by
  services/aws/emr-serverless/Dockerfile (the release's own Python is 3.9);
- the jars EMR lacks: Hudi's Spark bundle at HUDI_VERSION, the Kinesis source, and hudi-aws
  with the AWS SDK v2 modules for the Glue sync; not hadoop-aws or the SDK v1 bundle, which
  EMR has at its own versions;
- the entry script, spark/run_job.py.
Each file goes under s3://<bucket>/emr/<sha256>/<name>, named by its content: a second
submit of the same files uploads nothing, and a run never sees another's files.

The driver there has none of this machine's settings, so everything the job reads from its
environment here is an argument there: streams and checkpoint (as `lakehouse run` gives
them), region, catalog, database, warehouse and raw copy. Spark's settings are
services/spark/spark-defaults.conf's, resolved for the aws target, without the Hive
metastore client settings: EMR's Glue client is the Hive catalog there.

lakehouse.aws.emr_serverless starts it as an EMR Serverless job run, lakehouse.aws.emr_on_ec2 as a
step of a running EMR cluster.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lakehouse.aws import submit
from lakehouse.core.config import REPO_ROOT, Settings
from lakehouse.local import job_launcher

ENTRY_SCRIPT = REPO_ROOT / "spark" / "run_job.py"
ARTIFACTS_PREFIX = "emr"
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
# Where the environment archive is unpacked in each container (`spark.archives`'s #name).
PYTHON = "./environment/bin/python"


class EmrError(Exception):
    """The job cannot be prepared for EMR; the message says what to fix."""


@dataclass(frozen=True)
class Staged:
    """The s3:// URIs of what a run on EMR reads, and its arguments and Spark settings."""

    entry_point: str
    job_args: list[str]
    conf: dict[str, str]


def check_python_env(python_env: str) -> None:
    if not python_env.startswith("s3://") and not Path(python_env).is_file():
        raise EmrError(
            f"--python-env {python_env!r}: no such archive. Build it with "
            "`docker build --output . -f services/aws/emr-serverless/Dockerfile .` "
            "(docs/aws.md), or give its s3:// URI"
        )


def check_options(option: str, value: str, prefix: str, meaning: str, python_env: str) -> None:
    """What both EMR targets check of their options before anything is uploaded: the id or
    ARN that `option` gives starts with `prefix` (else `meaning` says what it should be),
    and the Python environment is one EMR can use."""
    if not value.startswith(prefix):
        raise EmrError(f"{option} {value!r}: {meaning}")
    check_python_env(python_env)


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
    """The run's Spark settings on any EMR: spark-defaults.conf resolved against the aws
    target's `env`, the Glue catalog, the jars and the Python environment (the executors';
    where the driver finds it depends on how it runs, so the caller adds that)."""
    conf = submit.resolved_spark_defaults(env, leave_out=NOT_ON_EMR)
    conf.update(
        {
            "spark.hadoop.hive.metastore.client.factory.class": GLUE_HIVE_CLIENT,
            "spark.jars": ",".join(jars),
            "spark.archives": f"{python_env}#environment",
            "spark.executorEnv.PYSPARK_PYTHON": PYTHON,
        }
    )
    return conf


def names_tables_file(job_args: Sequence[str]) -> bool:
    """Whether the job's arguments name a tables file (one on this machine)."""
    return any(arg == "--tables" or arg.startswith("--tables=") for arg in job_args)


def remote_job_args(settings: Settings, local_args: Sequence[str]) -> list[str]:
    """`lakehouse run`'s arguments (job_launcher.default_job_args, then the user's) for a
    driver that has none of this machine's settings or files."""
    if names_tables_file(local_args):
        raise EmrError(
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
        # Another run on the same checkpoint, from any host, is refused.
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


def stage(
    settings: Settings, python_env: str, local_args: Sequence[str], s3: Any, progress=print
) -> Staged:
    """Check that the job can run on EMR, upload what it reads, and return where it is.
    `python_env` was checked by the caller's request (check_python_env)."""
    if settings.target != "aws":
        raise EmrError("EMR runs against AWS: set LAKEHOUSE_TARGET=aws (docs/aws.md)")
    if settings["LAKEHOUSE_CATALOG"] == "hive" and not settings.hms_uri:
        raise EmrError("the job's catalog is Hive without a metastore: use glue")
    args = remote_job_args(settings, local_args)
    jars = emr_jars(settings)
    files = [ENTRY_SCRIPT, *jars]
    if not python_env.startswith("s3://"):
        files.append(Path(python_env))
    uris = upload(s3, settings["LAKEHOUSE_BUCKET"], files, progress)
    env_uri = uris.get(Path(python_env), python_env)
    conf = spark_conf(settings.service_env(), [uris[j] for j in jars], env_uri)
    return Staged(uris[ENTRY_SCRIPT], args, conf)
