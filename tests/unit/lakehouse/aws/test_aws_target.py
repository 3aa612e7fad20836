"""The aws target's settings and shipped config: endpoints only where the user sets them, no
static key, no plain HTTP, no account, region or bucket in the repository."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from lakehouse.aws.policy import POLICIES, PolicyError, render
from lakehouse.core.config import AWS_TARGET_FILE, ConfigError, load_settings

pytestmark = pytest.mark.unit

AWS = {"LAKEHOUSE_TARGET": "aws", "LAKEHOUSE_BUCKET": "my-lake", "AWS_REGION": "eu-central-1"}
ACCOUNT_ID = re.compile(r"\b\d{12}\b")
REGION = re.compile(r"\b(?:us|eu|ap|sa|ca|me|af|il|mx)-[a-z]+-\d\b")
ACCESS_KEY_ID = re.compile(r"\b(?:AKIA|ASIA)[A-Z0-9]{16}\b")


@pytest.fixture(autouse=True)
def no_aws_profile(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The machine's own AWS config must not lend a region to these tests."""
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-credentials"))
    monkeypatch.delenv("AWS_PROFILE", raising=False)


def test_aws_target_overrides_no_endpoint_and_carries_no_key() -> None:
    settings = load_settings(AWS)
    assert settings.target == "aws"
    assert settings.kinesis_endpoint == settings.s3_endpoint == settings.glue_endpoint == ""
    assert settings.hms_uri == ""
    env = settings.service_env()
    assert env["AWS_REGION"] == "eu-central-1"
    assert env["LAKEHOUSE_BUCKET"] == "my-lake"
    assert env["LAKEHOUSE_CATALOG"] == "glue"
    assert env["S3_ACCESS_KEY"] == env["S3_SECRET_KEY"] == ""
    assert env["S3A_PATH_STYLE"] == "false" and env["S3A_SSL"] == "true"
    assert "DefaultAWSCredentialsProviderChain" in env["S3A_CREDENTIALS_PROVIDER"]
    endpoints = settings.endpoints
    assert endpoints.kinesis is None and endpoints.s3 is None
    assert endpoints.s3_access_key is None and endpoints.s3_secret_key is None
    assert not [value for value in env.values() if value.startswith("http://")]


def test_endpoints_come_from_the_sdks_own_settings() -> None:
    settings = load_settings(
        {
            **AWS,
            "AWS_ENDPOINT_URL": "https://aws.example.test",
            "AWS_ENDPOINT_URL_KINESIS": "https://kinesis.example.test",
        }
    )
    assert settings.kinesis_endpoint == "https://kinesis.example.test"
    assert settings.s3_endpoint == settings.glue_endpoint == "https://aws.example.test"
    env = settings.service_env()
    assert env["S3A_PATH_STYLE"] == "true"  # an S3-compatible endpoint, addressed by path
    assert env["AWS_ENDPOINT_URL"] == "https://aws.example.test"


def test_region_from_aws_default_region_and_errors_that_say_what_to_set() -> None:
    settings = load_settings({**AWS, "AWS_REGION": "", "AWS_DEFAULT_REGION": "ap-south-1"})
    assert settings["AWS_REGION"] == "ap-south-1"
    with pytest.raises(ConfigError, match="AWS_REGION"):
        load_settings({**AWS, "AWS_REGION": ""})
    with pytest.raises(ConfigError, match="LAKEHOUSE_BUCKET"):
        load_settings({k: v for k, v in AWS.items() if k != "LAKEHOUSE_BUCKET"})
    with pytest.raises(ConfigError, match="local, aws"):
        load_settings({"LAKEHOUSE_TARGET": "gcp"})


def test_the_local_target_is_unchanged() -> None:
    settings = load_settings({})
    assert settings.target == "local" and settings["LAKEHOUSE_CATALOG"] == "hive"
    assert settings.s3_endpoint.startswith("http://127.0.0.1:")
    assert "S3A_PATH_STYLE" not in settings.service_env()


@pytest.mark.parametrize("path", [AWS_TARGET_FILE, *POLICIES.values()], ids=lambda p: p.name)
def test_shipped_aws_config_names_no_key_endpoint_account_region_or_bucket(path: Path) -> None:
    text = path.read_text()
    assert not ACCESS_KEY_ID.search(text)
    assert "http://" not in text and "https://" not in text
    assert not ACCOUNT_ID.search(text)
    assert not REGION.search(text)
    for line in text.splitlines():
        key, _, value = line.partition("=")
        if not line.startswith("#") and re.search(r"KEY|SECRET|TOKEN|BUCKET|REGION", key):
            assert value == "", line


def test_policies_fill_every_placeholder() -> None:
    values = dict(
        partition="aws",
        region="eu-central-1",
        account="210987654321",
        bucket="my-lake",
        stream="events",
        database="lakehouse",
    )
    for name in POLICIES:
        policy = render(name, values)
        text = json.dumps(policy)
        assert "${" not in text and "210987654321" in text
        assert policy["Version"] == "2012-10-17"
        for statement in policy["Statement"]:
            assert statement["Resource"] != "*", statement  # least privilege: scoped
            assert all(":*" not in action for action in statement["Action"]), statement
    with pytest.raises(PolicyError, match="account"):
        render("job", {k: v for k, v in values.items() if k != "account"})


def test_unknown_placeholder_is_named(tmp_path: Path) -> None:
    path = tmp_path / "p.json"
    path.write_text('{"Resource": "arn:${partition}:s3:::${bukket}"}')
    values = dict.fromkeys(("partition", "region", "account", "bucket", "stream", "database"), "x")
    with pytest.raises(PolicyError, match="bukket"):
        render("job", values, path)


def test_aws_policy_is_filled_in_for_the_callers_account(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from moto import mock_aws

    from lakehouse.cli import main

    for key, value in {**AWS, "AWS_ACCESS_KEY_ID": "k", "AWS_SECRET_ACCESS_KEY": "s"}.items():
        monkeypatch.setenv(key, value)
    with mock_aws():
        assert main(["aws-policy", "load-generator", "--stream", "orders-*"]) == 0
    text = capsys.readouterr().out
    statement = json.loads(text)["Statement"][0]
    assert statement["Resource"] == "arn:aws:kinesis:eu-central-1:123456789012:stream/orders-*"
    monkeypatch.setenv("LAKEHOUSE_TARGET", "local")
    assert main(["aws-policy", "job"]) == 2
    assert "LAKEHOUSE_TARGET=aws" in capsys.readouterr().out


def test_trino_glue_catalogs_name_endpoints_only_when_set(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from lakehouse.aws.trino_glue import glue_catalogs
    from lakehouse.cli import main

    plain = glue_catalogs(load_settings(AWS))
    assert set(plain) == {"hudi", "hive"}
    assert "connector.name=hudi" in plain["hudi"] and "hive.hudi-catalog-name=hudi" in plain["hive"]
    for properties in plain.values():
        assert "hive.metastore=glue" in properties
        assert "hive.metastore.glue.region=eu-central-1" in properties
        assert "endpoint" not in properties and "aws-access-key" not in properties
    simulated = glue_catalogs(
        load_settings({**AWS, "AWS_ENDPOINT_URL": "https://aws.example.test"})
    )
    assert "hive.metastore.glue.endpoint-url=https://aws.example.test" in simulated["hive"]
    assert "s3.endpoint=https://aws.example.test" in simulated["hudi"]
    with pytest.raises(ConfigError, match="LAKEHOUSE_TARGET=aws"):
        glue_catalogs(load_settings({}))
    for key, value in AWS.items():
        monkeypatch.setenv(key, value)
    assert main(["aws-trino-catalogs", str(tmp_path)]) == 0
    assert (tmp_path / "hive.properties").read_text() == plain["hive"]
