"""Where things live and what they are set to: versions.env, services/*.env.

Local mode and compose read the same files. Local mode adds the endpoints
(127.0.0.1 plus each service's port) that compose gets from service names.

The target (LAKEHOUSE_TARGET) says what the clients talk to: `local`, the sandbox's own
services (the default), or `aws`, an AWS account, for which services/aws/target.env replaces
the sandbox's keys and catalog and everything else comes from the AWS settings a user already
has: the region (AWS_REGION, AWS_DEFAULT_REGION or the profile), credentials (each SDK's
default provider chain), AWS_CA_BUNDLE, and endpoints only where AWS_ENDPOINT_URL or
AWS_ENDPOINT_URL_<SERVICE> names one.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from lakehouse.core.clients import Endpoints

REPO_ROOT = Path(__file__).resolve().parents[3]
SERVICES_DIR = REPO_ROOT / "services"
SERVICE_ENV_FILES = (
    "common.env",
    "kinesis/kinesis.env",
    "minio/minio.env",
    "hive-metastore/metastore.env",
    "trino/trino.env",
    "cdc/cdc.env",
    "prometheus/prometheus.env",
    "spark/spark.env",
    "zookeeper/zookeeper.env",
)
TARGET_ENV = "LAKEHOUSE_TARGET"
TARGETS = ("local", "aws")
AWS_TARGET_FILE = SERVICES_DIR / "aws" / "target.env"
# The user's AWS settings the aws target reads (besides what the SDKs read themselves).
AWS_SETTINGS = (
    "AWS_REGION",
    "AWS_DEFAULT_REGION",
    "AWS_CA_BUNDLE",
    "AWS_ENDPOINT_URL",
    "AWS_ENDPOINT_URL_KINESIS",
    "AWS_ENDPOINT_URL_S3",
    "AWS_ENDPOINT_URL_GLUE",
    "TRINO_URL",
)


class ConfigError(Exception):
    """A config file is missing or malformed; the message names the file and line."""


def parse_env_file(path: Path) -> dict[str, str]:
    """Parse KEY=VALUE lines; '#' starts a comment line. No shell expansion."""
    if not path.is_file():
        raise ConfigError(f"config file not found: {path}")
    values: dict[str, str] = {}
    for number, raw in enumerate(path.read_text().splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        key, sep, value = line.partition("=")
        key = key.strip()
        if not sep or not key.replace("_", "").isalnum():
            raise ConfigError(f"{path}:{number}: expected KEY=VALUE, got {raw!r}")
        values[key] = value.strip()
    return values


def default_cache_dir() -> Path:
    return Path(os.environ.get("LAKEHOUSE_CACHE", Path.home() / ".cache" / "lakehouse"))


def default_state_dir() -> Path:
    return Path(os.environ.get("LAKEHOUSE_STATE", REPO_ROOT / ".local"))


@dataclass(frozen=True)
class Settings:
    """Everything local mode needs to know, resolved once."""

    versions: Mapping[str, str]
    env: Mapping[str, str]
    cache_dir: Path
    state_dir: Path
    target: str = "local"
    # The environment's AWS_SETTINGS, read by the aws target.
    aws: Mapping[str, str] = field(default_factory=dict)

    def __getitem__(self, key: str) -> str:
        if key in self.env:
            return self.env[key]
        if key in self.versions:
            return self.versions[key]
        raise ConfigError(
            f"setting {key} is not defined in versions.env or services/*.env "
            "(nor in the environment)"
        )

    def overridden(self, overrides: Mapping[str, str]) -> Settings:
        """These settings with some values replaced, as the environment replaces them at
        load_settings (e.g. HUDI_VERSION=1.0.2 for a benchmark variant)."""
        unknown = sorted(set(overrides) - {*self.versions, *self.env})
        if unknown:
            raise ConfigError(
                f"{', '.join(unknown)}: not a setting of versions.env or services/*.env"
            )
        return replace(
            self,
            versions={k: overrides.get(k, v) for k, v in self.versions.items()},
            env={k: overrides.get(k, v) for k, v in self.env.items()},
        )

    def port(self, key: str) -> int:
        value = self[key]
        if not value.isdigit():
            raise ConfigError(f"{key}={value!r} is not a port number")
        return int(value)

    @property
    def logs_dir(self) -> Path:
        return self.state_dir / "logs"

    @property
    def run_dir(self) -> Path:
        return self.state_dir / "run"

    @property
    def data_dir(self) -> Path:
        return self.state_dir / "data"

    @property
    def jars_dir(self) -> Path:
        return self.cache_dir / "jars"

    # Endpoints as clients on this machine see them.
    @property
    def kinesis_endpoint(self) -> str:
        if self.target == "aws":
            return self.aws_endpoint("KINESIS")
        return f"http://127.0.0.1:{self.port('KINESIS_PORT')}"

    @property
    def s3_endpoint(self) -> str:
        if self.target == "aws":
            return self.aws_endpoint("S3")
        return f"http://127.0.0.1:{self.port('MINIO_PORT')}"

    @property
    def glue_endpoint(self) -> str:
        return self.aws_endpoint("GLUE") if self.target == "aws" else ""

    @property
    def hms_uri(self) -> str:
        return "" if self.target == "aws" else f"thrift://127.0.0.1:{self.port('HMS_PORT')}"

    @property
    def lock_url(self) -> str:
        """ZooKeeper's host:port for Hudi's lock (the aws target locks through DynamoDB)."""
        return "" if self.target == "aws" else f"127.0.0.1:{self.port('ZOOKEEPER_PORT')}"

    @property
    def trino_url(self) -> str:
        if self.target == "aws":
            return self.aws.get("TRINO_URL", "")
        return f"http://127.0.0.1:{self.port('TRINO_PORT')}"

    def aws_endpoint(self, service: str) -> str:
        """The endpoint the user set for `service` (as the AWS SDKs read it), else "": the
        SDK's own regional endpoint."""
        return self.aws.get(f"AWS_ENDPOINT_URL_{service}") or self.aws.get("AWS_ENDPOINT_URL", "")

    @property
    def endpoints(self) -> Endpoints:
        """The services as clients on this machine reach them (lakehouse.core.clients)."""
        return Endpoints.from_env(self.service_env())

    def service_env(self) -> dict[str, str]:
        """Environment for service processes: settings plus derived endpoints."""
        env = {**self.versions, **self.env}
        env.update(
            KINESIS_ENDPOINT=self.kinesis_endpoint,
            S3_ENDPOINT=self.s3_endpoint,
            HMS_URI=self.hms_uri,
            LOCK_URL=self.lock_url,
            TRINO_URL=self.trino_url,
        )
        if self.target == "aws":
            env.update(
                {key: value for key, value in self.aws.items() if key.startswith("AWS_")},
                GLUE_ENDPOINT=self.glue_endpoint,
                # An S3-compatible endpoint (a simulation) is addressed by path; AWS's own
                # by bucket host name.
                S3A_PATH_STYLE="true" if self.s3_endpoint else "false",
            )
        return env


def load_settings(environ: Mapping[str, str] | None = None) -> Settings:
    """Read versions.env and services/*.env (and services/aws/target.env for the aws
    target); the process environment overrides any key they define (e.g.
    KINESIS_ENGINE=kinesalite make local-up)."""
    environ = os.environ if environ is None else environ
    target = environ.get(TARGET_ENV) or "local"
    if target not in TARGETS:
        raise ConfigError(
            f"{TARGET_ENV}={target!r} is not a target: use one of {', '.join(TARGETS)}"
        )
    versions = parse_env_file(REPO_ROOT / "versions.env")
    env: dict[str, str] = {}
    for name in SERVICE_ENV_FILES:
        env.update(parse_env_file(SERVICES_DIR / name))
    aws: dict[str, str] = {}
    region = ""
    if target == "aws":
        env.update(parse_env_file(AWS_TARGET_FILE))
        aws = {key: environ[key] for key in AWS_SETTINGS if environ.get(key)}
        region = aws_region(environ)
        if not environ.get("LAKEHOUSE_BUCKET"):
            raise ConfigError(
                f"{TARGET_ENV}=aws needs LAKEHOUSE_BUCKET, the S3 bucket the tables go to "
                "(create it first: docs/aws.md)"
            )
    overridden = {k: environ[k] for k in {*versions, *env} if k in environ}
    versions = {k: overridden.get(k, v) for k, v in versions.items()}
    env = {k: overridden.get(k, v) for k, v in env.items()}
    if target == "aws":
        env["AWS_REGION"] = region
    return Settings(versions, env, default_cache_dir(), default_state_dir(), target, aws)


def aws_region(environ: Mapping[str, str]) -> str:
    """The region as the AWS CLI finds it: AWS_REGION, AWS_DEFAULT_REGION, the profile."""
    region = environ.get("AWS_REGION") or environ.get("AWS_DEFAULT_REGION")
    if not region:
        import boto3

        region = boto3.session.Session(profile_name=environ.get("AWS_PROFILE")).region_name
    if not region:
        raise ConfigError(
            f"{TARGET_ENV}=aws needs a region: set AWS_REGION, or a region in your AWS profile"
        )
    return region
