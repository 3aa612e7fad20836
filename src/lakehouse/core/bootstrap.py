"""Create what the pipeline expects to exist: the bucket, the stream, the database.

All through the services' APIs (never image-specific init hooks), so the same code
bootstraps local mode (`lakehouse up`, with Settings.service_env()) and compose (the job
container runs `python -m lakehouse.core.bootstrap` with its environment). Every step is
idempotent.

    python -m lakehouse.core.bootstrap [--wait SECONDS]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from botocore.exceptions import ClientError

from lakehouse.core.clients import Endpoints, kinesis_client, s3_client, trino_connection

Progress = Callable[[str], None]
T = TypeVar("T")

STREAM_MODES = ("PROVISIONED", "ON_DEMAND")


class BootstrapError(Exception):
    pass


def ensure_bucket(env: Mapping[str, str]) -> str:
    bucket = env["LAKEHOUSE_BUCKET"]
    s3 = s3_client(Endpoints.from_env(env))
    try:
        s3.head_bucket(Bucket=bucket)
    except ClientError:
        s3.create_bucket(Bucket=bucket)
    return bucket


def ensure_stream(
    client: Any,
    name: str,
    *,
    shards: int = 2,
    mode: str = "PROVISIONED",
    engine: str = "",
    timeout_s: float = 30,
) -> str:
    """Create the stream if absent (PROVISIONED with `shards`, or ON_DEMAND) and wait until
    it is ACTIVE. `client`: a Kinesis client (clients.kinesis_client)."""
    mode = mode.upper()
    if mode not in STREAM_MODES:
        raise BootstrapError(f"KINESIS_STREAM_MODE={mode!r}: expected one of {STREAM_MODES}")
    if mode == "ON_DEMAND" and engine == "kinesalite":
        raise BootstrapError(
            "KINESIS_STREAM_MODE=ON_DEMAND: kinesalite has no on-demand streams; "
            "use PROVISIONED or KINESIS_ENGINE=kinesis-mock"
        )
    try:
        if mode == "ON_DEMAND":
            client.create_stream(StreamName=name, StreamModeDetails={"StreamMode": "ON_DEMAND"})
        else:
            client.create_stream(StreamName=name, ShardCount=shards)
    except ClientError as error:
        if error.response["Error"]["Code"] != "ResourceInUseException":  # it exists
            raise
    deadline = time.monotonic() + timeout_s
    while True:
        summary = client.describe_stream_summary(StreamName=name)["StreamDescriptionSummary"]
        if summary["StreamStatus"] == "ACTIVE":
            return name
        if time.monotonic() > deadline:
            raise BootstrapError(
                f"Kinesis stream {name} is still {summary['StreamStatus']} after "
                f"{timeout_s:.0f}s; check the Kinesis service's log"
            )
        time.sleep(0.2)


def delete_stream(client: Any, name: str) -> None:
    """Delete the stream (and its consumers), a stream already gone included: a retried
    delete of a big stream finds it gone when the engine answered the first after the
    client's timeout (kinesalite, 1,200,000 records)."""
    try:
        client.delete_stream(StreamName=name, EnforceConsumerDeletion=True)
    except ClientError as error:
        if error.response["Error"]["Code"] != "ResourceNotFoundException":
            raise


def ensure_configured_stream(env: Mapping[str, str]) -> str:
    """The stream the settings name (KINESIS_STREAM_NAME, _MODE, KINESIS_SHARD_COUNT)."""
    return ensure_stream(
        kinesis_client(Endpoints.from_env(env)),
        env["KINESIS_STREAM_NAME"],
        shards=int(env["KINESIS_SHARD_COUNT"]),
        mode=env["KINESIS_STREAM_MODE"],
        engine=env.get("KINESIS_ENGINE", ""),
    )


def ensure_database(env: Mapping[str, str]) -> str:
    """Create the metastore database through Trino's Hive catalog."""
    database = env["LAKEHOUSE_DATABASE"]
    location = f"s3a://{env['LAKEHOUSE_BUCKET']}/warehouse/{database}.db"
    cursor = trino_connection(Endpoints.from_env(env), catalog="hive").cursor()
    cursor.execute(f"CREATE SCHEMA IF NOT EXISTS hive.{database} WITH (location = '{location}')")
    cursor.fetchall()
    return database


def bootstrap(env: Mapping[str, str], progress: Progress = print, wait_s: float = 0) -> None:
    """Every step; with `wait_s`, each step is retried that long while its service warms
    up (compose starts the job beside services that may still be loading)."""
    progress(f"  bucket s3://{_retry('the bucket', ensure_bucket, env, wait_s)}")
    stream = _retry("the stream", ensure_configured_stream, env, wait_s)
    progress(f"  stream {stream} ({env['KINESIS_STREAM_MODE']})")
    progress(f"  metastore database {_retry('the database', ensure_database, env, wait_s)}")


def _retry(
    what: str, step: Callable[[Mapping[str, str]], T], env: Mapping[str, str], wait_s: float
) -> T:
    deadline = time.monotonic() + wait_s
    while True:
        try:
            return step(env)
        except BootstrapError:
            raise
        except Exception as error:
            if time.monotonic() >= deadline:
                raise BootstrapError(f"bootstrap: creating {what} failed: {error}") from error
            time.sleep(2)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m lakehouse.core.bootstrap", description=__doc__)
    parser.add_argument("--wait", type=float, default=180, help="retry each step this long (s)")
    args = parser.parse_args(argv)
    try:
        bootstrap(os.environ, lambda line: print(f"bootstrap:{line}", flush=True), args.wait)
    except KeyError as error:
        print(f"bootstrap: {error.args[0]} is not set in the environment", file=sys.stderr)
        return 1
    except BootstrapError as error:
        print(f"bootstrap: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
