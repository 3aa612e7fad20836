"""Clients of the stack's services (Kinesis, S3, Trino, hudi-rs), built from one Endpoints.

Local mode, compose and real AWS differ only in the Endpoints value: loopback ports in
local mode (config.Settings.endpoints), service names in compose, and no endpoint at all
for AWS, where boto3 resolves AWS_ENDPOINT_URL_<SERVICE> or the AWS default itself.
Both modes build it from the same environment keys (Endpoints.from_env).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlparse

import boto3
from botocore.config import Config

# Kinesis emulators accept any credentials, but boto3 refuses to sign without some.
EMULATOR_CREDENTIALS = ("test", "test")
LOCALSTACK = "localstack"


@dataclass(frozen=True)
class Endpoints:
    """Where each service answers and how to sign in; None means AWS's own endpoint."""

    region: str
    kinesis: str | None = None
    s3: str | None = None
    trino: str = "http://127.0.0.1:8080"
    s3_access_key: str | None = None
    s3_secret_key: str | None = None
    # "localstack" (compose) gets its Kinesis client from localstack-client's session.
    kinesis_engine: str = ""

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> Endpoints:
        """From the keys the services' env files and compose set: KINESIS_ENDPOINT,
        S3_ENDPOINT, TRINO_URL, AWS_REGION, S3_ACCESS_KEY, S3_SECRET_KEY, KINESIS_ENGINE."""
        return cls(
            region=env.get("AWS_REGION") or "us-east-1",
            kinesis=env.get("KINESIS_ENDPOINT") or None,
            s3=env.get("S3_ENDPOINT") or None,
            trino=env.get("TRINO_URL") or "http://127.0.0.1:8080",
            s3_access_key=env.get("S3_ACCESS_KEY") or None,
            s3_secret_key=env.get("S3_SECRET_KEY") or None,
            kinesis_engine=env.get("KINESIS_ENGINE", ""),
        )


def kinesis_client(
    endpoints: Endpoints,
    *,
    max_attempts: int = 3,
    max_pool_connections: int = 10,
    read_timeout: float = 10,
    access_key: str | None = None,
    secret_key: str | None = None,
) -> Any:
    """A boto3 Kinesis client. `max_attempts=1` leaves every retry to the caller (the load
    generator counts and reports each attempt itself)."""
    config = Config(
        retries={"total_max_attempts": max_attempts, "mode": "standard"},
        max_pool_connections=max_pool_connections,
        connect_timeout=5,
        read_timeout=read_timeout,
    )
    local_http = (endpoints.kinesis or "").startswith("http://")
    if local_http and endpoints.kinesis_engine == LOCALSTACK and not access_key:
        from localstack_client.session import Session

        host = urlparse(endpoints.kinesis).netloc
        session = Session(region_name=endpoints.region, localstack_host=host)
        return session.client("kinesis", config=config)
    # An emulator (a plain-HTTP endpoint) signs with any key; behind HTTPS may be AWS, whose
    # credentials come from boto3's default chain.
    if local_http and not access_key and not os.environ.get("AWS_ACCESS_KEY_ID"):
        access_key, secret_key = EMULATOR_CREDENTIALS
    return boto3.client(
        "kinesis",
        endpoint_url=endpoints.kinesis,
        region_name=endpoints.region,
        aws_access_key_id=access_key,
        aws_secret_access_key=secret_key,
        config=config,
    )


def s3_client(endpoints: Endpoints) -> Any:
    """A boto3 S3 client; path-style addressing, which MinIO needs."""
    return boto3.client(
        "s3",
        endpoint_url=endpoints.s3,
        region_name=endpoints.region,
        aws_access_key_id=endpoints.s3_access_key,
        aws_secret_access_key=endpoints.s3_secret_key,
        config=Config(s3={"addressing_style": "path"}, retries={"max_attempts": 2}),
    )


def emr_serverless_client(endpoints: Endpoints) -> Any:
    """EMR Serverless of the region; its endpoint and credentials as boto3 finds them."""
    return boto3.client("emr-serverless", region_name=endpoints.region)


def emr_client(endpoints: Endpoints) -> Any:
    """EMR (clusters on EC2) of the region; its endpoint and credentials as boto3 finds them."""
    return boto3.client("emr", region_name=endpoints.region)


def sts_identity(endpoints: Endpoints) -> str:
    """The ARN the default credential chain signs in as (STS GetCallerIdentity)."""
    sts = boto3.client("sts", region_name=endpoints.region)
    return str(sts.get_caller_identity()["Arn"])


def trino_connection(
    endpoints: Endpoints,
    catalog: str = "hudi",
    schema: str = "default",
    user: str = "lakehouse",
    request_timeout_s: float = 30.0,
) -> Any:
    """A Trino DB-API connection (the trino package is imported here, on first use)."""
    import trino

    url = urlparse(endpoints.trino)
    return trino.dbapi.connect(
        host=url.hostname,
        port=url.port or (443 if url.scheme == "https" else 80),
        http_scheme=url.scheme or "http",
        user=user,
        catalog=catalog,
        schema=schema,
        request_timeout=request_timeout_s,
    )


def hudi_rs_table(endpoints: Endpoints, base_uri: str) -> Any:
    """A hudi-rs (PyPI `hudi`) reader of the Hudi table at `base_uri` (s3://bucket/...)."""
    from hudi import HudiTableBuilder

    options = {"aws_region": endpoints.region}
    if endpoints.s3:
        options["aws_endpoint_url"] = endpoints.s3
        if endpoints.s3.startswith("http://"):
            options["aws_allow_http"] = "true"
    if endpoints.s3_access_key and endpoints.s3_secret_key:
        options.update(
            aws_access_key_id=endpoints.s3_access_key,
            aws_secret_access_key=endpoints.s3_secret_key,
        )
    else:
        # hudi-rs's S3 client knows fewer credential sources than boto3 (no SSO, no assumed
        # role profiles, no container endpoint by full URI): take boto3's chain's answer.
        credentials = boto3.session.Session().get_credentials()
        if credentials is not None:
            frozen = credentials.get_frozen_credentials()
            options.update(
                aws_access_key_id=frozen.access_key, aws_secret_access_key=frozen.secret_key
            )
            if frozen.token:
                options["aws_session_token"] = frozen.token
    return HudiTableBuilder.from_base_uri(base_uri).with_storage_options(options).build()
