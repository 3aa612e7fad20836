"""`lakehouse submit --emr-cluster CLUSTER_ID`: the job as a step of a running EMR cluster.

What is uploaded and how the job is configured there is lakehouse.aws.emr's; this writes the
AddJobFlowSteps request: a command-runner.jar step running spark-submit in YARN cluster
mode, the driver in YARN's application master with the job's Python environment.

A streaming job never ends, and EMR runs a cluster's steps one after another: the step
therefore ends once YARN has accepted the application (spark.yarn.submit.waitAppCompletion
false), and the job is followed as a YARN application, not as the step. YARN restarts a
failed driver (its attempts); the writer lease on S3 makes the new attempt wait until the
old one's lease has lapsed, so two drivers never write at once.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from lakehouse.aws import emr
from lakehouse.core.config import Settings

ON_YARN = {
    "spark.yarn.appMasterEnv.PYSPARK_PYTHON": emr.PYTHON,
    "spark.yarn.submit.waitAppCompletion": "false",
}


@dataclass(frozen=True)
class Step:
    cluster_id: str  # j-...
    python_env: str  # s3:// URI or a local archive (services/aws/emr-serverless/Dockerfile)
    name: str = "lakehouse-streaming-job"

    def __post_init__(self) -> None:
        emr.check_options(
            "--emr-cluster",
            self.cluster_id,
            "j-",
            "the id of a running EMR cluster (j-..., `aws emr list-clusters --active`)",
            self.python_env,
        )


def step_request(
    step: Step, entry_point: str, job_args: Sequence[str], conf: Mapping[str, str]
) -> dict[str, Any]:
    """AddJobFlowSteps' request (boto3's emr client). command-runner.jar runs its
    arguments without a shell: each is passed as it is, nothing is quoted."""
    submit_args = ["spark-submit", "--deploy-mode", "cluster"]
    for key, value in {**conf, **ON_YARN}.items():
        submit_args += ["--conf", f"{key}={value}"]
    return {
        "JobFlowId": step.cluster_id,
        "Steps": [
            {
                "Name": step.name,
                # A failed submit must not terminate the user's cluster.
                "ActionOnFailure": "CONTINUE",
                "HadoopJarStep": {
                    "Jar": "command-runner.jar",
                    "Args": [*submit_args, entry_point, *job_args],
                },
            }
        ],
    }


def prepare(
    settings: Settings, step: Step, local_args: Sequence[str], s3: Any, progress=print
) -> dict[str, Any]:
    """Upload what the step needs and return its request."""
    staged = emr.stage(settings, step.python_env, local_args, s3, progress)
    return step_request(step, staged.entry_point, staged.job_args, staged.conf)
