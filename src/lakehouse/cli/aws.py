"""`lakehouse submit|cost|aws-policy|aws-trino-catalogs`: the job on a cluster or an AWS
account, what it costs there and what it may do."""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from lakehouse.cli.common import (
    Command,
    full_job_args,
    in_foreground,
    say,
)
from lakehouse.core.config import Settings
from lakehouse.core.fields import same_named
from lakehouse.local import installers, job_launcher


def cost(settings: Settings, args: argparse.Namespace) -> int:
    """The same pipeline's monthly cost on AWS (lakehouse.aws.cost)."""
    from lakehouse.aws import cost

    try:
        work = same_named(cost.Workload, args)
    except cost.CostError as error:
        say(f"error: {error}")
        return 2
    if args.cpu_s_per_1k:
        cpu, cpu_from = args.cpu_s_per_1k, "--cpu-s-per-1k"
    else:
        cpu, cpu_from = cost.measured_cpu_s_per_1k()
    prices = cost.load_prices()
    say(cost.report(work, cost.estimate(work, cpu, prices), prices, cpu_from))
    return 0


def aws_policy(settings: Settings, args: argparse.Namespace) -> int:
    """An IAM policy of the AWS target, filled in for the account the credentials reach."""
    from lakehouse.aws import policy
    from lakehouse.core.clients import sts_identity

    if settings.target != "aws":
        say("error: set LAKEHOUSE_TARGET=aws (and LAKEHOUSE_BUCKET, a region): docs/aws.md")
        return 2
    arn = sts_identity(settings.endpoints)
    values = {
        "partition": arn.split(":")[1],
        "region": settings["AWS_REGION"],
        "account": arn.split(":")[4],
        "bucket": settings["LAKEHOUSE_BUCKET"],
        "stream": args.stream or settings["KINESIS_STREAM_NAME"],
        "database": settings["LAKEHOUSE_DATABASE"],
    }
    print(json.dumps(policy.render(args.role, values), indent=2))
    return 0


def submit(settings: Settings, args: argparse.Namespace) -> int:
    """The job with its executors on a Spark standalone cluster (lakehouse.aws.submit), as pods
    on Kubernetes (lakehouse.aws.kubernetes), as an EMR Serverless job run
    (lakehouse.aws.emr_serverless) or as a step of an EMR cluster (lakehouse.aws.emr_on_ec2)."""
    from lakehouse.aws import submit

    targets = [t for t in ("master", "emr_serverless", "emr_cluster") if getattr(args, t)]
    if len(targets) != 1:
        say(
            "error: say where, once: --master spark://host:7077 or k8s://https://host:port, "
            "--emr-serverless "
            "APPLICATION_ID or --emr-cluster CLUSTER_ID"
        )
        return 2
    if args.emr_serverless:
        return _submit_emr_serverless(settings, args)
    if args.emr_cluster:
        return _submit_emr_on_ec2(settings, args)
    job_args = full_job_args(settings, [a for a in args.job_args if a != "--"])
    if job_args is None:
        return 2
    if args.master.startswith("k8s://"):
        return _submit_kubernetes(settings, args, job_args)
    cluster = same_named(submit.Cluster, args)
    env = submit.cluster_env(settings, cluster)
    say(f"The job's driver here, its executors on {cluster.master}")
    return in_foreground(job_launcher.job_command(job_args, master=cluster.master), env)


def _submit_kubernetes(settings: Settings, args: argparse.Namespace, job_args: list[str]) -> int:
    from lakehouse.aws import kubernetes

    run = same_named(kubernetes.KubernetesRun, args)
    command = kubernetes.prepare(settings, run, job_args)
    if args.dry_run:
        say("dry run: start it with")
        print(shlex.join(command))
        return 0
    say(f"The job's driver and executors as pods in namespace {run.namespace} of {run.master}")
    env = {**os.environ, "JAVA_HOME": str(installers.spark_java_home())}
    rc = subprocess.run(command, env=env).returncode
    if rc == 0:
        say(f"the driver's pod is created; follow it: {kubernetes.follow_hint(run)}")
    return rc


def _emr_request(
    settings: Settings, args: argparse.Namespace, needs: Sequence[str], build: Any
) -> dict[str, Any] | None:
    """The request `build(job_args, s3)` prepares, written to --request-out; None (and the
    reason said) when an option is missing or the job cannot run there."""
    from lakehouse.aws.emr import EmrError
    from lakehouse.core.clients import s3_client

    target = "--emr-serverless" if args.emr_serverless else "--emr-cluster"
    for option in needs:
        if not getattr(args, option):
            say(f"error: {target} needs --{option.replace('_', '-')}")
            return None
    job_args = full_job_args(settings, [a for a in args.job_args if a != "--"])
    if job_args is None:
        return None
    try:
        request: dict[str, Any] = build(job_args, s3_client(settings.endpoints))
    except EmrError as error:
        say(f"error: {error}")
        return None
    Path(args.request_out).write_text(json.dumps(request, indent=2) + "\n")
    say(f"wrote the request to {args.request_out}")
    return request


def _submit_emr_serverless(settings: Settings, args: argparse.Namespace) -> int:
    from lakehouse.aws import emr_serverless
    from lakehouse.core.clients import emr_serverless_client

    def build(job_args: list[str], s3: Any) -> dict[str, Any]:
        run = emr_serverless.JobRun(
            application_id=args.emr_serverless,
            execution_role_arn=args.execution_role_arn,
            python_env=args.python_env,
            logs_uri=args.logs_uri,
        )
        return emr_serverless.prepare(settings, run, job_args, s3, say)

    request = _emr_request(settings, args, ("execution_role_arn", "python_env"), build)
    if request is None:
        return 2
    if args.dry_run:
        say(
            "dry run: start it with `aws emr-serverless start-job-run "
            f"--cli-input-json file://{args.request_out}`"
        )
        return 0
    started = emr_serverless_client(settings.endpoints).start_job_run(**request)
    say(
        f"started job run {started['jobRunId']} on application {started['applicationId']}; "
        f"follow it: aws emr-serverless get-job-run --application-id "
        f"{started['applicationId']} --job-run-id {started['jobRunId']}"
    )
    return 0


def _submit_emr_on_ec2(settings: Settings, args: argparse.Namespace) -> int:
    from lakehouse.aws import emr_on_ec2
    from lakehouse.core.clients import emr_client

    def build(job_args: list[str], s3: Any) -> dict[str, Any]:
        step = emr_on_ec2.Step(cluster_id=args.emr_cluster, python_env=args.python_env)
        return emr_on_ec2.prepare(settings, step, job_args, s3, say)

    request = _emr_request(settings, args, ("python_env",), build)
    if request is None:
        return 2
    cluster = request["JobFlowId"]
    if args.dry_run:
        say(f"dry run: add it with boto3, emr.add_job_flow_steps(**request) ({cluster})")
        return 0
    step_id = emr_client(settings.endpoints).add_job_flow_steps(**request)["StepIds"][0]
    say(
        f"added step {step_id} to cluster {cluster}: it ends once YARN accepts the job; "
        f"follow it: aws emr describe-step --cluster-id {cluster} --step-id {step_id}, "
        "then the application in YARN's resource manager (`yarn application -list` on the "
        "primary node) or Spark's history server"
    )
    return 0


def aws_trino_catalogs(settings: Settings, args: argparse.Namespace) -> int:
    """Trino's catalogs over Glue and S3 for the aws target (lakehouse.aws.trino_glue)."""
    from lakehouse.aws.trino_glue import glue_catalogs

    for name, properties in glue_catalogs(settings).items():
        if args.dir:
            path = Path(args.dir) / f"{name}.properties"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(properties)
            say(f"wrote {path}")
        else:
            print(f"# --- {name}.properties\n{properties}", end="")
    return 0


def _submit_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--master",
        help="the standalone master, spark://host:7077, or Kubernetes, k8s://https://host:port",
    )
    k8s = parser.add_argument_group("Kubernetes (--master k8s://...; docs/aws.md)")
    k8s.add_argument("--image", default="", help="the lakehouse/spark image the pods run")
    k8s.add_argument("--namespace", default="default")
    k8s.add_argument(
        "--service-account",
        default="lakehouse-job",
        help="the driver's service account (bound to the job's IAM role on EKS)",
    )
    k8s.add_argument("--executors", type=int, default=1, help="executor pods")
    _emr_arguments(parser.add_argument_group("EMR (instead of --master; docs/aws.md)"))
    parser.add_argument("--total-executor-cores", type=int, default=1)
    parser.add_argument("--executor-memory", default="1g")
    parser.add_argument(
        "--driver-host",
        default="127.0.0.1",
        help="this machine's address as the cluster's hosts reach it",
    )
    parser.add_argument(
        "--ship-jars",
        action="store_true",
        help="send the jars to each executor (default: they are at the same paths on its host)",
    )
    parser.add_argument("job_args", nargs=argparse.REMAINDER)


def _emr_arguments(emr: Any) -> None:
    emr.add_argument("--emr-serverless", metavar="APPLICATION_ID", help="start a job run there")
    emr.add_argument(
        "--emr-cluster", metavar="CLUSTER_ID", help="add the job as a step of that EMR cluster"
    )
    emr.add_argument("--execution-role-arn", help="EMR Serverless: the role the job runs as")
    emr.add_argument(
        "--python-env",
        help="the job's Python environment archive (local or s3://): "
        "services/aws/emr-serverless/Dockerfile builds it",
    )
    emr.add_argument("--logs-uri", default="", help="EMR Serverless: s3:// for the job run's logs")
    emr.add_argument(
        "--request-out",
        default="emr-request.json",
        help="where the request (StartJobRun, or AddJobFlowSteps) is written",
    )
    emr.add_argument(
        "--dry-run",
        action="store_true",
        help="upload and write the request (Kubernetes: print the command), start nothing",
    )


def _cost_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--events-per-sec", type=float, required=True)
    parser.add_argument("--event-bytes", type=int, required=True, help="average record size")
    parser.add_argument("--distinct-keys", type=int, default=1_000_000, help="rows in a table")
    parser.add_argument("--event-types", type=int, default=1, help="entries of the tables file")
    parser.add_argument("--trigger-seconds", type=float, default=5.0, help="micro-batch interval")
    parser.add_argument(
        "--cpu-s-per-1k",
        type=float,
        help="the job's CPU-seconds per 1,000 events (default: the newest drain benchmark's)",
    )
    parser.add_argument("--utilisation", type=float, default=0.6, help="of the job's vCPUs")


def _catalogs_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "dir",
        nargs="?",
        help="write hudi.properties and hive.properties here (Trino's etc/catalog)",
    )


def _policy_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("role", choices=["job", "load-generator"])
    parser.add_argument("--stream", help="stream name or pattern (default: KINESIS_STREAM_NAME)")


COMMANDS = {
    "submit": Command(
        submit,
        "the job on a Spark cluster: standalone, Kubernetes or EMR",
        "AWS",
        "lakehouse submit --master spark://10.0.0.10:7077\n"
        "lakehouse submit --emr-serverless APP_ID --execution-role-arn ARN "
        "--python-env env.tar.gz --dry-run",
        _submit_arguments,
    ),
    "cost": Command(
        cost,
        "monthly cost of this pipeline on AWS, from dated list prices",
        "AWS",
        "lakehouse cost --events-per-sec 1000 --event-bytes 300",
        _cost_arguments,
    ),
    "aws-policy": Command(
        aws_policy,
        "the job's or load generator's IAM policy for your account",
        "AWS",
        "LAKEHOUSE_TARGET=aws LAKEHOUSE_BUCKET=my-lakehouse lakehouse aws-policy job",
        _policy_arguments,
    ),
    "aws-trino-catalogs": Command(
        aws_trino_catalogs,
        "Trino's catalog files for the tables in Glue",
        "AWS",
        "LAKEHOUSE_TARGET=aws LAKEHOUSE_BUCKET=my-lakehouse "
        "lakehouse aws-trino-catalogs etc/catalog",
        _catalogs_arguments,
    ),
}
