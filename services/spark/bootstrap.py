"""Create what the job expects, through the services' APIs (compose mode).

The same steps as `lakehouse up` does in local mode (src/lakehouse/bootstrap.py),
with the endpoints compose gives: the bucket (S3 API), the stream (Kinesis API),
the metastore database (Trino's hive catalog). Idempotent; retries while a
service is still warming up.
"""

from __future__ import annotations

import os
import sys
import time

import boto3
import trino
from botocore.config import Config

env = os.environ.get


def retry(what: str, fn, timeout_s: float = 180.0):  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            return fn()
        except Exception as error:
            if time.monotonic() > deadline:
                print(f"bootstrap: {what} failed: {error}", file=sys.stderr)
                raise
            time.sleep(2)


def bucket() -> str:
    name = env("LAKEHOUSE_BUCKET", "lakehouse")
    s3 = boto3.client(
        "s3", endpoint_url=env("S3_ENDPOINT"), region_name=env("AWS_REGION"),
        aws_access_key_id=env("S3_ACCESS_KEY"), aws_secret_access_key=env("S3_SECRET_KEY"),
        config=Config(s3={"addressing_style": "path"}),
    )  # fmt: skip
    if name not in {b["Name"] for b in s3.list_buckets().get("Buckets", [])}:
        s3.create_bucket(Bucket=name)
    return name


def stream() -> str:
    name = env("KINESIS_STREAM_NAME", "events")
    client = boto3.client(
        "kinesis", endpoint_url=env("KINESIS_ENDPOINT"), region_name=env("AWS_REGION"),
        aws_access_key_id="test", aws_secret_access_key="test",
    )  # fmt: skip
    try:
        client.describe_stream_summary(StreamName=name)
    except client.exceptions.ResourceNotFoundException:
        if env("KINESIS_STREAM_MODE", "PROVISIONED").upper() == "ON_DEMAND":
            client.create_stream(StreamName=name, StreamModeDetails={"StreamMode": "ON_DEMAND"})
        else:
            client.create_stream(StreamName=name, ShardCount=int(env("KINESIS_SHARD_COUNT", "4")))
    for _ in range(150):
        summary = client.describe_stream_summary(StreamName=name)["StreamDescriptionSummary"]
        if summary["StreamStatus"] == "ACTIVE":
            return name
        time.sleep(0.2)
    raise RuntimeError(f"stream {name} did not become ACTIVE")


def database() -> str:
    name = env("LAKEHOUSE_DATABASE", "lakehouse")
    location = f"s3a://{env('LAKEHOUSE_BUCKET', 'lakehouse')}/warehouse/{name}.db"
    host, _, port = env("TRINO_HOSTPORT", "trino:8080").partition(":")
    cursor = trino.dbapi.connect(
        host=host, port=int(port), user="lakehouse", catalog="hive", schema="default"
    ).cursor()
    cursor.execute(f"CREATE SCHEMA IF NOT EXISTS hive.{name} WITH (location = '{location}')")
    cursor.fetchall()
    return name


if __name__ == "__main__":
    print(f"bootstrap: bucket s3://{retry('bucket', bucket)}", flush=True)
    print(f"bootstrap: stream {retry('stream', stream)}", flush=True)
    print(f"bootstrap: metastore database {retry('database', database)}", flush=True)
