"""Create what the pipeline expects to exist: the stream, the bucket, the database.

All through the services' APIs (never image-specific init hooks), so the same
code bootstraps local mode and compose. Every step is idempotent.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import trino
from botocore.exceptions import ClientError

from lakehouse.config import Settings
from lakehouse.services import kinesis_client, s3_client

Progress = Callable[[str], None]


class BootstrapError(Exception):
    pass


def ensure_bucket(settings: Settings) -> str:
    bucket = settings["LAKEHOUSE_BUCKET"]
    s3 = s3_client(settings)
    try:
        s3.head_bucket(Bucket=bucket)
    except ClientError:
        s3.create_bucket(Bucket=bucket)
    return bucket


def ensure_stream(
    settings: Settings,
    name: str | None = None,
    mode: str | None = None,
    shards: int | None = None,
    timeout_s: float = 30,
) -> str:
    """Create the stream if absent (PROVISIONED with N shards, or ON_DEMAND); wait until ACTIVE."""
    name = name or settings["KINESIS_STREAM_NAME"]
    mode = (mode or settings["KINESIS_STREAM_MODE"]).upper()
    shards = shards or int(settings["KINESIS_SHARD_COUNT"])
    client = kinesis_client(settings)
    try:
        client.describe_stream_summary(StreamName=name)
    except client.exceptions.ResourceNotFoundException:
        if mode == "ON_DEMAND":
            if settings["KINESIS_ENGINE"] == "kinesalite":
                raise BootstrapError(
                    "KINESIS_STREAM_MODE=ON_DEMAND: kinesalite has no on-demand streams; "
                    "use PROVISIONED or KINESIS_ENGINE=kinesis-mock"
                ) from None
            client.create_stream(StreamName=name, StreamModeDetails={"StreamMode": "ON_DEMAND"})
        elif mode == "PROVISIONED":
            client.create_stream(StreamName=name, ShardCount=shards)
        else:
            raise BootstrapError(
                f"KINESIS_STREAM_MODE={mode!r}: expected PROVISIONED or ON_DEMAND"
            ) from None
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        summary = client.describe_stream_summary(StreamName=name)["StreamDescriptionSummary"]
        if summary["StreamStatus"] == "ACTIVE":
            return name
        time.sleep(0.2)
    raise BootstrapError(f"Kinesis stream {name} did not become ACTIVE within {timeout_s:.0f}s")


def trino_connection(settings: Settings, catalog: str = "hudi", schema: str | None = None):  # type: ignore[no-untyped-def]
    return trino.dbapi.connect(
        host="127.0.0.1",
        port=settings.port("TRINO_PORT"),
        user="lakehouse",
        catalog=catalog,
        schema=schema or settings["LAKEHOUSE_DATABASE"],
    )


def ensure_database(settings: Settings) -> str:
    """Create the metastore database through Trino's Hive catalog."""
    database = settings["LAKEHOUSE_DATABASE"]
    location = f"s3a://{settings['LAKEHOUSE_BUCKET']}/warehouse/{database}.db"
    cursor = trino_connection(settings, catalog="hive", schema="default").cursor()
    cursor.execute(f"CREATE SCHEMA IF NOT EXISTS hive.{database} WITH (location = '{location}')")
    cursor.fetchall()
    return database


def bootstrap(settings: Settings, progress: Progress = print) -> None:
    progress(f"  bucket s3://{ensure_bucket(settings)}")
    progress(f"  stream {ensure_stream(settings)} ({settings['KINESIS_STREAM_MODE']})")
    progress(f"  metastore database {ensure_database(settings)}")
