"""Endpoints from the environment and the boto3 clients built from them (lakehouse.core.clients)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import boto3
import pytest

from lakehouse.core import clients
from lakehouse.core.clients import EMULATOR_CREDENTIALS, Endpoints, kinesis_client, s3_client

pytestmark = pytest.mark.unit

AWS_KEYS = (
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "AWS_PROFILE",
    "AWS_ENDPOINT_URL",
    "AWS_ENDPOINT_URL_KINESIS",
    "AWS_ENDPOINT_URL_S3",
    "LOCALSTACK_HOST",
    "USE_SSL",
)


@pytest.fixture(autouse=True)
def no_aws_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No credentials, profiles or endpoints from this machine; no metadata service."""
    for key in AWS_KEYS:
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "credentials"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")


@pytest.fixture
def boto3_calls(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """The keyword arguments of each boto3.client call (the real client is still built)."""
    calls: list[dict[str, Any]] = []
    real = boto3.client

    def recording(*args: Any, **kwargs: Any) -> Any:
        calls.append(kwargs)
        return real(*args, **kwargs)

    monkeypatch.setattr(clients.boto3, "client", recording)
    return calls


def test_from_env_defaults() -> None:
    assert Endpoints.from_env({}) == Endpoints(
        region="us-east-1",
        kinesis=None,
        s3=None,
        trino="http://127.0.0.1:8080",
        s3_access_key=None,
        s3_secret_key=None,
        kinesis_engine="",
    )


def test_from_env_reads_every_key_and_empty_means_unset() -> None:
    env = {
        "AWS_REGION": "eu-west-1",
        "KINESIS_ENDPOINT": "http://kinesis:4567",
        "S3_ENDPOINT": "",
        "TRINO_URL": "",
        "S3_ACCESS_KEY": "",
        "S3_SECRET_KEY": "secret",
        "KINESIS_ENGINE": "kinesalite",
    }
    endpoints = Endpoints.from_env(env)
    assert endpoints.region == "eu-west-1"
    assert endpoints.kinesis == "http://kinesis:4567"
    assert endpoints.s3 is None and endpoints.s3_access_key is None
    assert endpoints.s3_secret_key == "secret"
    assert endpoints.trino == "http://127.0.0.1:8080"
    assert endpoints.kinesis_engine == "kinesalite"
    assert Endpoints.from_env({"AWS_REGION": ""}).region == "us-east-1"


def test_an_emulator_gets_placeholder_credentials(boto3_calls: list[dict[str, Any]]) -> None:
    client = kinesis_client(Endpoints(region="us-east-1", kinesis="http://127.0.0.1:4567"))
    assert client.meta.endpoint_url == "http://127.0.0.1:4567"
    call = boto3_calls[0]
    assert (call["aws_access_key_id"], call["aws_secret_access_key"]) == EMULATOR_CREDENTIALS


def test_an_emulator_uses_credentials_from_the_environment_when_set(
    monkeypatch: pytest.MonkeyPatch, boto3_calls: list[dict[str, Any]]
) -> None:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "from-env")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "from-env-secret")
    kinesis_client(Endpoints(region="us-east-1", kinesis="http://127.0.0.1:4567"))
    assert boto3_calls[0]["aws_access_key_id"] is None  # boto3's own chain


def test_an_https_endpoint_gets_the_default_credential_chain(
    monkeypatch: pytest.MonkeyPatch, boto3_calls: list[dict[str, Any]]
) -> None:
    monkeypatch.delenv("AWS_ACCESS_KEY_ID", raising=False)
    kinesis_client(Endpoints(region="us-east-1", kinesis="https://127.0.0.1:4567"))
    assert boto3_calls[0]["aws_access_key_id"] is None  # AWS or a simulation of it


def test_given_credentials_win(boto3_calls: list[dict[str, Any]]) -> None:
    endpoints = Endpoints(region="us-east-1", kinesis="http://127.0.0.1:4567")
    kinesis_client(endpoints, access_key="AK", secret_key="SK")
    assert (boto3_calls[0]["aws_access_key_id"], boto3_calls[0]["aws_secret_access_key"]) == (
        "AK",
        "SK",
    )


def test_aws_gets_no_endpoint_and_no_placeholder_credentials(
    monkeypatch: pytest.MonkeyPatch, boto3_calls: list[dict[str, Any]]
) -> None:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AK")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "SK")
    client = kinesis_client(Endpoints(region="eu-west-1"), max_attempts=1)
    assert client.meta.endpoint_url == "https://kinesis.eu-west-1.amazonaws.com"
    assert boto3_calls[0]["endpoint_url"] is None
    assert boto3_calls[0]["aws_access_key_id"] is None
    assert client.meta.config.retries["total_max_attempts"] == 1


def test_localstack_gets_its_client_from_localstack_client() -> None:
    endpoints = Endpoints(
        region="us-east-1", kinesis="http://localstack:4566", kinesis_engine="localstack"
    )
    client = kinesis_client(endpoints)
    assert client.meta.endpoint_url == "http://localstack:4566"
    assert client.meta.region_name == "us-east-1"


def test_s3_client_uses_path_style_addressing() -> None:
    endpoints = Endpoints(
        region="us-east-1",
        s3="http://127.0.0.1:9000",
        s3_access_key="minio",
        s3_secret_key="minio-secret",
    )
    client = s3_client(endpoints)
    assert client.meta.endpoint_url == "http://127.0.0.1:9000"
    assert client.meta.config.s3 == {"addressing_style": "path"}
