"""The aws target against moto's in-process AWS, for the tests of the EMR submit paths."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import boto3
import pytest
from moto import mock_aws

from lakehouse.core.config import Settings, load_settings
from lakehouse.local import job_launcher

AWS = {"LAKEHOUSE_TARGET": "aws", "LAKEHOUSE_BUCKET": "lake", "AWS_REGION": "eu-west-1"}


@pytest.fixture
def aws(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Settings]:
    """The aws target's settings, with moto's S3 holding the bucket "lake" and the job's
    jars as small files (what EMR needs of them is their names)."""
    for key in ("AWS_PROFILE", "AWS_ENDPOINT_URL", "AWS_CONFIG_FILE"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    jars = [
        tmp_path / name
        for name in (
            "hudi-spark3.5-bundle_2.12-0.15.0.jar",
            "hadoop-aws-3.3.4.jar",
            "aws-java-sdk-bundle-1.12.262.jar",
            "lakehouse-kinesis-source-abc.jar",
            "lakehouse-job-helpers-abc.jar",
            "hudi-aws-0.15.0.jar",
        )
    ]
    for jar in jars:
        jar.write_bytes(jar.name.encode())
    monkeypatch.setattr(job_launcher, "spark_jars", lambda _: jars)
    with mock_aws():
        boto3.client("s3", region_name="eu-west-1").create_bucket(
            Bucket="lake", CreateBucketConfiguration={"LocationConstraint": "eu-west-1"}
        )
        yield load_settings(AWS)


@pytest.fixture
def python_env(tmp_path: Path) -> str:
    archive = tmp_path / "lakehouse-python-env.tar.gz"
    archive.write_bytes(b"an environment")
    return str(archive)
