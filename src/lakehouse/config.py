"""Where things live and what they are set to: versions.env, services/*.env.

Local mode and compose read the same files. Local mode adds the endpoints
(127.0.0.1 plus each service's port) that compose gets from service names.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from lakehouse.clients import Endpoints

REPO_ROOT = Path(__file__).resolve().parents[2]
SERVICES_DIR = REPO_ROOT / "services"
SERVICE_ENV_FILES = (
    "common.env",
    "kinesis/kinesis.env",
    "minio/minio.env",
    "hive-metastore/metastore.env",
    "trino/trino.env",
    "cdc/cdc.env",
    "prometheus/prometheus.env",
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

    def __getitem__(self, key: str) -> str:
        if key in self.env:
            return self.env[key]
        if key in self.versions:
            return self.versions[key]
        raise ConfigError(
            f"setting {key} is not defined in versions.env or services/*.env "
            "(nor in the environment)"
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
        return f"http://127.0.0.1:{self.port('KINESIS_PORT')}"

    @property
    def s3_endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port('MINIO_PORT')}"

    @property
    def hms_uri(self) -> str:
        return f"thrift://127.0.0.1:{self.port('HMS_PORT')}"

    @property
    def trino_url(self) -> str:
        return f"http://127.0.0.1:{self.port('TRINO_PORT')}"

    @property
    def endpoints(self) -> Endpoints:
        """The services as clients on this machine reach them (lakehouse.clients)."""
        return Endpoints.from_env(self.service_env())

    def service_env(self) -> dict[str, str]:
        """Environment for service processes: settings plus derived endpoints."""
        env = {**self.versions, **self.env}
        env.update(
            KINESIS_ENDPOINT=self.kinesis_endpoint,
            S3_ENDPOINT=self.s3_endpoint,
            HMS_URI=self.hms_uri,
            TRINO_URL=self.trino_url,
        )
        return env


def load_settings(environ: Mapping[str, str] | None = None) -> Settings:
    """Read versions.env and services/*.env; the process environment overrides
    any key they define (e.g. KINESIS_ENGINE=kinesalite make local-up)."""
    environ = os.environ if environ is None else environ
    versions = parse_env_file(REPO_ROOT / "versions.env")
    env: dict[str, str] = {}
    for name in SERVICE_ENV_FILES:
        env.update(parse_env_file(SERVICES_DIR / name))
    overridden = {k: environ[k] for k in {*versions, *env} if k in environ}
    versions = {k: overridden.get(k, v) for k, v in versions.items()}
    env = {k: overridden.get(k, v) for k, v in env.items()}
    return Settings(versions, env, default_cache_dir(), default_state_dir())
