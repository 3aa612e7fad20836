"""`lakehouse submit --emr-serverless`: what is uploaded, and the job run's request, against
moto's in-process EMR Serverless and S3 (a unit test: the request's shape, not a run)."""

from __future__ import annotations

import shlex
from pathlib import Path

import boto3
import pytest

from lakehouse.aws import emr, emr_serverless
from lakehouse.core.config import Settings, load_settings

pytestmark = pytest.mark.unit

ROLE = "arn:aws:iam::123456789012:role/lakehouse-job"
LOCAL_ARGS = ["--stream", "events", "--checkpoint", "s3a://lake/checkpoints/events-1"]


def _conf(request: dict) -> dict[str, str]:
    words = shlex.split(request["jobDriver"]["sparkSubmit"]["sparkSubmitParameters"])
    assert words[::2] == ["--conf"] * (len(words) // 2)
    return dict(word.split("=", 1) for word in words[1::2])


def test_the_job_run_gets_its_files_from_s3_and_every_setting_as_arguments(
    aws: Settings, python_env: str
) -> None:
    run = emr_serverless.JobRun("00app", ROLE, python_env, logs_uri="s3://lake/logs/")
    s3 = boto3.client("s3", region_name="eu-west-1")
    request = emr_serverless.prepare(
        aws, run, [*LOCAL_ARGS, "--status-file", "/home/me/.local/status.json"], s3, print
    )
    uploaded = {o["Key"] for o in s3.list_objects_v2(Bucket="lake")["Contents"]}
    names = {key.rsplit("/", 1)[1] for key in uploaded}
    # EMR has its own hadoop-aws and SDK v1: ours would clash with them.
    assert names == {
        "run_job.py",
        "hudi-spark3.5-bundle_2.12-0.15.0.jar",
        "lakehouse-kinesis-source-abc.jar",
        "lakehouse-job-helpers-abc.jar",
        "hudi-aws-0.15.0.jar",
        "lakehouse-python-env.tar.gz",
    }
    assert all(key.startswith("emr/") for key in uploaded)
    spark = request["jobDriver"]["sparkSubmit"]
    assert spark["entryPoint"].startswith("s3://lake/emr/")
    assert spark["entryPoint"].endswith("/run_job.py")
    args = spark["entryPointArguments"]
    assert "--status-file" not in args  # a file on this machine
    assert args[-5:] == ["--writer-lease", *LOCAL_ARGS]  # one job per checkpoint, any host
    pairs = dict(zip(args[:-5:2], args[1:-5:2], strict=True))
    assert pairs == {
        "--region": "eu-west-1",
        "--catalog": "glue",
        "--database": "lakehouse",
        "--warehouse": "s3a://lake/warehouse/lakehouse.db",
        "--raw": "s3a://lake/raw",
    }
    conf = _conf(request)
    assert conf["spark.archives"].endswith("/lakehouse-python-env.tar.gz#environment")
    assert conf["spark.emr-serverless.driverEnv.PYSPARK_PYTHON"] == "./environment/bin/python"
    assert conf["spark.executorEnv.PYSPARK_PYTHON"] == "./environment/bin/python"
    assert len(conf["spark.jars"].split(",")) == 4
    assert conf["spark.hadoop.hive.metastore.client.factory.class"].endswith("HiveClientFactory")
    assert conf["spark.sql.extensions"].endswith("HoodieSparkSessionExtension")
    assert conf["spark.hadoop.fs.s3a.aws.credentials.provider"].endswith("ProviderChain")
    assert not [key for key in conf if key.startswith("spark.sql.hive.metastore.")]
    assert not [key for key in conf if key.endswith("extraJavaOptions")]  # EMR's own stay
    assert "spark.hadoop.hive.metastore.uris" not in conf
    assert not [value for value in conf.values() if "${env." in value]
    assert request["executionRoleArn"] == ROLE
    assert request["configurationOverrides"]["monitoringConfiguration"] == {
        "s3MonitoringConfiguration": {"logUri": "s3://lake/logs/"}
    }

    # What `lakehouse submit` then does with it: the API takes the request as it is.
    client = boto3.client("emr-serverless", region_name="eu-west-1")
    app = client.create_application(name="lakehouse", releaseLabel="emr-7.2.0", type="SPARK")
    started = client.start_job_run(**{**request, "applicationId": app["applicationId"]})
    job_run = client.get_job_run(applicationId=app["applicationId"], jobRunId=started["jobRunId"])
    assert job_run["jobRun"]["jobDriver"] == request["jobDriver"]


def test_a_second_submit_uploads_nothing_and_is_a_new_job_run(
    aws: Settings, python_env: str
) -> None:
    run = emr_serverless.JobRun("00app", ROLE, python_env)
    s3 = boto3.client("s3", region_name="eu-west-1")
    said: list[str] = []
    first = emr_serverless.prepare(aws, run, LOCAL_ARGS, s3, said.append)
    assert len(said) == 6
    second = emr_serverless.prepare(aws, run, LOCAL_ARGS, s3, said.append)
    assert len(said) == 6, "the same files were uploaded again"
    assert first["jobDriver"] == second["jobDriver"]
    assert first["clientToken"] != second["clientToken"]
    assert "configurationOverrides" not in first


def test_what_cannot_work_there_is_refused_before_anything_is_uploaded(
    aws: Settings, python_env: str, tmp_path: Path
) -> None:
    env = python_env
    with pytest.raises(emr.EmrError, match="execution-role-arn"):
        emr_serverless.JobRun("00app", "lakehouse-job", env)
    with pytest.raises(emr.EmrError, match="Dockerfile"):
        emr_serverless.JobRun("00app", ROLE, str(tmp_path / "missing.tar.gz"))
    s3 = boto3.client("s3", region_name="eu-west-1")
    run = emr_serverless.JobRun("00app", ROLE, env)
    with pytest.raises(emr.EmrError, match="tables file"):
        emr_serverless.prepare(aws, run, [*LOCAL_ARGS, "--tables", "mine.yaml"], s3, print)
    with pytest.raises(emr.EmrError, match="tables file"):
        emr_serverless.prepare(aws, run, [*LOCAL_ARGS, "--tables=mine.yaml"], s3, print)
    with pytest.raises(emr.EmrError, match="LAKEHOUSE_TARGET=aws"):
        emr_serverless.prepare(load_settings({}), run, LOCAL_ARGS, s3, print)
    assert "Contents" not in s3.list_objects_v2(Bucket="lake")
