"""`lakehouse submit`: the executors get the driver's resolved settings, not their hosts'."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from lakehouse.aws import submit
from lakehouse.core.config import load_settings
from lakehouse.local import job_launcher

pytestmark = pytest.mark.unit


def test_env_references_resolve_as_hadoop_resolves_them() -> None:
    env = {"A": "a", "EMPTY": ""}
    assert submit.resolve_env_refs("x${env.A}y", env) == "xay"
    assert submit.resolve_env_refs("${env.EMPTY:-d}", env) == "d"
    assert submit.resolve_env_refs("${env.EMPTY-d}", env) == ""
    assert submit.resolve_env_refs("${env.UNSET-d}", env) == "d"
    assert submit.resolve_env_refs("${env.UNSET:-}", env) == ""
    with pytest.raises(submit.SubmitError, match="UNSET"):
        submit.resolve_env_refs("${env.UNSET}", env)


def test_every_env_reference_of_the_shipped_defaults_resolves_in_both_targets() -> None:
    defaults = submit.spark_defaults()
    local = submit.executor_conf(load_settings({}).service_env(), defaults)
    assert local["spark.hadoop.fs.s3a.endpoint"].startswith("http://127.0.0.1:")
    assert local["spark.hadoop.fs.s3a.connection.ssl.enabled"] == "false"
    assert "disableCbor" in local["spark.executor.extraJavaOptions"]
    aws_env = load_settings(
        {"LAKEHOUSE_TARGET": "aws", "LAKEHOUSE_BUCKET": "b", "AWS_REGION": "eu-west-1"}
    ).service_env()
    aws_env["JAVA_TOOL_OPTIONS"] = "-XX:X"  # the driver's own options stay the driver's
    aws = submit.executor_conf(aws_env, defaults, "-Djavax.net.ssl.trustStore=/t.p12")
    assert aws["spark.hadoop.fs.s3a.access.key"] == ""
    assert aws["spark.hadoop.fs.s3a.connection.ssl.enabled"] == "true"
    assert aws["spark.hadoop.fs.s3a.aws.credentials.provider"].endswith("ProviderChain")
    assert "-Djavax.net.ssl.trustStore=/t.p12" in aws["spark.executor.extraJavaOptions"]
    assert "-XX:X" not in aws["spark.executor.extraJavaOptions"]
    assert not [v for v in {**local, **aws}.values() if "${env." in v]


def test_the_jobs_quick_jit_reaches_the_executors() -> None:
    defaults = submit.spark_defaults()
    env = load_settings({}).service_env()
    options = "spark.executor.extraJavaOptions"
    assert job_launcher.QUICK_JIT not in submit.executor_conf(env, defaults)[options]
    env[job_launcher.JIT_ENV] = "quick"
    assert job_launcher.QUICK_JIT in submit.executor_conf(env, defaults)[options].split()


def test_submit_arguments(monkeypatch: pytest.MonkeyPatch) -> None:
    settings = load_settings({})
    driver_env = {**settings.service_env(), "SPARK_LOCAL_IP": "127.0.0.1"}
    monkeypatch.setattr(job_launcher, "job_env", lambda *_: dict(driver_env))
    monkeypatch.setattr(job_launcher, "spark_jars", lambda _: [Path("/j/a.jar"), Path("/j/b.jar")])
    monkeypatch.setattr(job_launcher, "trust_options", lambda _: "")
    env = submit.cluster_env(settings, submit.Cluster("spark://m:7077", 2))
    args = shlex.split(env["PYSPARK_SUBMIT_ARGS"])
    assert args[:4] == ["--master", "spark://m:7077", "--deploy-mode", "client"]
    assert args[-1] == "pyspark-shell"
    assert "spark.executor.extraClassPath=/j/a.jar:/j/b.jar" in args
    assert "--jars" not in args and env["SPARK_LOCAL_IP"] == "127.0.0.1"
    remote = submit.Cluster("spark://m:7077", driver_host="10.0.0.5", ship_jars=True)
    env = submit.cluster_env(settings, remote)
    args = shlex.split(env["PYSPARK_SUBMIT_ARGS"])
    assert args[args.index("--jars") + 1] == "/j/a.jar,/j/b.jar"
    assert "spark.driver.bindAddress=0.0.0.0" in args and "SPARK_LOCAL_IP" not in env
    with pytest.raises(submit.SubmitError, match="spark://host:7077"):
        submit.Cluster("k8s://https://k:6443")
