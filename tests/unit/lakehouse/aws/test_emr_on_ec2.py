"""`lakehouse submit --emr-cluster`: the step's request, against moto's in-process EMR and S3
(a unit test: the request's shape and that the API takes it, not a run)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import boto3
import pytest

from lakehouse import cli
from lakehouse.aws import emr, emr_on_ec2
from lakehouse.core.config import Settings
from tests.unit.lakehouse.conftest import AWS

pytestmark = pytest.mark.unit

LOCAL_ARGS = ["--stream", "events", "--checkpoint", "s3a://lake/checkpoints/events-1"]


def _submit_conf(args: list[str]) -> dict[str, str]:
    confs = [args[i + 1] for i, word in enumerate(args) if word == "--conf"]
    return dict(conf.split("=", 1) for conf in confs)


def _running_cluster(client: Any) -> str:
    return str(
        client.run_job_flow(
            Name="lakehouse",
            ReleaseLabel="emr-7.2.0",
            Instances={"InstanceCount": 1, "KeepJobFlowAliveWhenNoSteps": True},
            JobFlowRole="EMR_EC2_DefaultRole",
            ServiceRole="EMR_DefaultRole",
        )["JobFlowId"]
    )


def test_the_step_submits_the_job_to_yarn_and_ends_when_yarn_has_it(
    aws: Settings, python_env: str
) -> None:
    s3 = boto3.client("s3", region_name="eu-west-1")
    step = emr_on_ec2.Step("j-2AXXXXXXGAPLF", python_env)
    request = emr_on_ec2.prepare(aws, step, LOCAL_ARGS, s3, print)

    assert request["JobFlowId"] == "j-2AXXXXXXGAPLF"
    [spec] = request["Steps"]
    assert spec["ActionOnFailure"] == "CONTINUE"  # never terminates the user's cluster
    assert spec["HadoopJarStep"]["Jar"] == "command-runner.jar"
    args = spec["HadoopJarStep"]["Args"]
    assert args[:3] == ["spark-submit", "--deploy-mode", "cluster"]
    entry = next(i for i, word in enumerate(args) if word.endswith("/run_job.py"))
    assert args[entry].startswith("s3://lake/emr/")
    assert args[entry - 2] == "--conf"  # spark-submit's options, then the script, its args
    assert args[entry + 1 :][-5:] == ["--writer-lease", *LOCAL_ARGS]
    conf = _submit_conf(args[:entry])
    assert conf["spark.yarn.appMasterEnv.PYSPARK_PYTHON"] == "./environment/bin/python"
    assert conf["spark.executorEnv.PYSPARK_PYTHON"] == "./environment/bin/python"
    assert conf["spark.yarn.submit.waitAppCompletion"] == "false"
    assert conf["spark.archives"].endswith("/lakehouse-python-env.tar.gz#environment")
    assert conf["spark.hadoop.hive.metastore.client.factory.class"] == emr.GLUE_HIVE_CLIENT
    assert not [key for key in conf if key.startswith("spark.emr-serverless.")]
    assert not [value for value in conf.values() if "${env." in value]

    # What `lakehouse submit` then does with it: the API takes the request as it is.
    client = boto3.client("emr", region_name="eu-west-1")
    cluster = _running_cluster(client)
    [step_id] = client.add_job_flow_steps(**{**request, "JobFlowId": cluster})["StepIds"]
    added = client.describe_step(ClusterId=cluster, StepId=step_id)["Step"]
    assert added["Config"]["Args"] == args
    assert added["ActionOnFailure"] == "CONTINUE"


def test_what_cannot_work_there_is_refused_before_anything_is_uploaded(
    aws: Settings, python_env: str
) -> None:
    with pytest.raises(emr.EmrError, match="list-clusters"):
        emr_on_ec2.Step("my-cluster", python_env)
    with pytest.raises(emr.EmrError, match="Dockerfile"):
        emr_on_ec2.Step("j-1", "missing.tar.gz")
    s3 = boto3.client("s3", region_name="eu-west-1")
    step = emr_on_ec2.Step("j-1", python_env)
    with pytest.raises(emr.EmrError, match="tables file"):
        emr_on_ec2.prepare(aws, step, [*LOCAL_ARGS, "--tables", "mine.yaml"], s3, print)
    assert "Contents" not in s3.list_objects_v2(Bucket="lake")


def test_submit_adds_the_step_to_the_cluster(
    aws: Settings,
    python_env: str,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    for key, value in AWS.items():
        monkeypatch.setenv(key, value)
    # submit checks the job's stream first, as `lakehouse run` does.
    boto3.client("kinesis", region_name="eu-west-1").create_stream(
        StreamName=aws["KINESIS_STREAM_NAME"], ShardCount=1
    )
    client = boto3.client("emr", region_name="eu-west-1")
    cluster = _running_cluster(client)
    out = tmp_path / "request.json"
    argv = ["submit", "--emr-cluster", cluster, "--python-env", python_env]
    assert cli.main([*argv, "--request-out", str(out), "--", "--trigger-seconds", "30"]) == 0

    [step] = client.list_steps(ClusterId=cluster)["Steps"]
    assert (
        step["Config"]["Args"] == json.loads(out.read_text())["Steps"][0]["HadoopJarStep"]["Args"]
    )
    assert step["Config"]["Args"][-2:] == ["--trigger-seconds", "30"]
    assert f"aws emr describe-step --cluster-id {cluster} --step-id {step['Id']}" in (
        capsys.readouterr().out
    )
    assert cli.main([*argv, "--emr-serverless", "00app"]) == 2  # one place at a time
