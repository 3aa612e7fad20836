"""Each service of the local stack, exercised through its real client API."""

from __future__ import annotations

import io
import uuid

import pytest
import trino
from minio import Minio

from lakehouse.local import stack as stack_module

pytestmark = pytest.mark.local


def test_all_services_report_running_with_memory(stack) -> None:
    rows = stack_module.statuses(stack.settings)
    assert {r.name: r.state for r in rows} == {
        "minio": "running",
        "kinesis": "running",
        "metastore": "running",
        "trino": "running",
        "prometheus": "running",
        "processes": "running",
        "zookeeper": "running",
    }
    assert all(r.rss_mb and r.rss_mb > 10 for r in rows)


def test_kinesis_put_and_read_back_by_shard_iterator(kinesis) -> None:
    name = f"test-{uuid.uuid4().hex[:8]}"
    kinesis.create_stream(StreamName=name, ShardCount=1)
    kinesis.get_waiter("stream_exists").wait(
        StreamName=name, WaiterConfig={"Delay": 0.2, "MaxAttempts": 100}
    )
    sent = [f"record-{i}".encode() for i in range(25)]
    response = kinesis.put_records(
        StreamName=name, Records=[{"Data": d, "PartitionKey": str(i)} for i, d in enumerate(sent)]
    )
    assert response["FailedRecordCount"] == 0
    shard = kinesis.list_shards(StreamName=name)["Shards"][0]["ShardId"]
    iterator = kinesis.get_shard_iterator(
        StreamName=name, ShardId=shard, ShardIteratorType="TRIM_HORIZON"
    )["ShardIterator"]
    received = kinesis.get_records(ShardIterator=iterator, Limit=100)["Records"]
    assert [r["Data"] for r in received] == sent
    kinesis.delete_stream(StreamName=name)


def test_default_stream_was_bootstrapped(stack, kinesis) -> None:
    name = stack.settings["KINESIS_STREAM_NAME"]
    summary = kinesis.describe_stream_summary(StreamName=name)["StreamDescriptionSummary"]
    assert summary["StreamStatus"] == "ACTIVE"
    if stack.settings["KINESIS_STREAM_MODE"] == "PROVISIONED":
        assert summary["OpenShardCount"] == int(stack.settings["KINESIS_SHARD_COUNT"])


def test_s3_put_list_get_with_minio_sdk(stack) -> None:
    host = stack.s3_endpoint.removeprefix("http://")
    client = Minio(
        host, access_key=stack.s3_access_key, secret_key=stack.s3_secret_key, secure=False
    )
    assert client.bucket_exists(stack.bucket)
    key = f"tests/{uuid.uuid4().hex}.bin"
    payload = bytes(range(256)) * 64
    client.put_object(stack.bucket, key, io.BytesIO(payload), len(payload))
    listed = [o.object_name for o in client.list_objects(stack.bucket, prefix="tests/")]
    assert key in listed
    assert client.get_object(stack.bucket, key).read() == payload
    # Parquet readers fetch the footer with a suffix range; it must be exact.
    tail = client.get_object(stack.bucket, key, offset=len(payload) - 100, length=100).read()
    assert tail == payload[-100:]
    client.remove_object(stack.bucket, key)


def test_schema_created_in_metastore_is_seen_by_trino(stack) -> None:
    cursor = trino.dbapi.connect(
        host=stack.trino_host, port=stack.trino_port, user="test", catalog="hive"
    ).cursor()
    schema = f"t_{uuid.uuid4().hex[:8]}"
    cursor.execute(
        f"CREATE SCHEMA hive.{schema} WITH (location = 's3a://{stack.bucket}/warehouse/{schema}')"
    )
    cursor.fetchall()
    cursor.execute("SHOW SCHEMAS FROM hudi")
    schemas = {row[0] for row in cursor.fetchall()}
    assert {schema, stack.database} <= schemas
    cursor.execute(f"DROP SCHEMA hive.{schema}")
    cursor.fetchall()
