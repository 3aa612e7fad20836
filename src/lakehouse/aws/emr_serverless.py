"""`lakehouse submit --emr-serverless APPLICATION`: the job as an EMR Serverless job run.

What is uploaded and how the job is configured there is lakehouse.aws.emr's; this writes the
StartJobRun request, which the CLI starts with boto3 (the default credential chain):
`aws emr-serverless get-job-run` follows it.
"""

from __future__ import annotations

import shlex
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from lakehouse.aws import emr
from lakehouse.core.config import Settings


@dataclass(frozen=True)
class JobRun:
    application_id: str
    execution_role_arn: str
    python_env: str  # s3:// URI or a local archive (services/aws/emr-serverless/Dockerfile)
    name: str = "lakehouse-streaming-job"
    logs_uri: str = ""  # s3:// for the driver's and executors' logs; "" for none

    def __post_init__(self) -> None:
        emr.check_options(
            "--execution-role-arn",
            self.execution_role_arn,
            "arn:",
            "the ARN of the role the job runs as (with the job's policy: "
            "`lakehouse aws-policy job`)",
            self.python_env,
        )


def job_run_request(
    run: JobRun,
    entry_point: str,
    job_args: Sequence[str],
    conf: Mapping[str, str],
    client_token: str,
) -> dict[str, Any]:
    """StartJobRun's request (boto3's emr-serverless client, the AWS CLI's --cli-input-json)."""
    conf = {
        **conf,
        "spark.emr-serverless.driverEnv.PYSPARK_DRIVER_PYTHON": emr.PYTHON,
        "spark.emr-serverless.driverEnv.PYSPARK_PYTHON": emr.PYTHON,
    }
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
    staged = emr.stage(settings, run.python_env, local_args, s3, progress)
    # One per submit: boto3 retries the call with it, and a later submit (a restart after
    # the job stopped) is a new job run, not the old one returned.
    return job_run_request(run, staged.entry_point, staged.job_args, staged.conf, uuid.uuid4().hex)
