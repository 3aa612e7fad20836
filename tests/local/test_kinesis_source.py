"""The JVM Kinesis streaming source (spark/kinesis-source) against the local Kinesis emulator.

Needs the session fixtures of tests/local/conftest.py: `stack` (kinesis_endpoint, region,
aws_access_key, aws_secret_key) and `spark_jars` (jar paths, the built source jar included).
Every test makes its own uniquely named stream, so tests do not see each other's records.
"""

from __future__ import annotations

import time
import uuid
from collections import defaultdict
from pathlib import Path

import pytest

from lakehouse.local.job_launcher import QUICK_JIT

# One worker runs this module's tests, which share its module-scoped fixtures
# (tests/support/xdist_modules.py).
pytestmark = pytest.mark.local

QUERY_TIMEOUT_S = 180


@pytest.fixture(scope="module")
def spark(spark_jars):
    from pyspark.sql import SparkSession

    # getOrCreate: if another module already started a session, it must carry these jars too.
    session = (
        SparkSession.builder.master("local[2]")
        .appName("test-kinesis-source")
        .config("spark.jars", ",".join(spark_jars))
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.ui.enabled", "false")
        .config("spark.driver.extraJavaOptions", QUICK_JIT)  # lives a minute: C1 only
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("WARN")
    return session


def _wait_active(kinesis, name: str) -> None:
    deadline = time.time() + 30
    while time.time() < deadline:
        summary = kinesis.describe_stream_summary(StreamName=name)["StreamDescriptionSummary"]
        if summary["StreamStatus"] == "ACTIVE":
            return
        time.sleep(0.2)
    raise AssertionError(f"stream {name} did not become ACTIVE")


@pytest.fixture
def stream(kinesis):
    name = f"test-src-{uuid.uuid4().hex[:10]}"
    # Emulators cap shards per account (kinesalite: 10 by default) and delete streams
    # asynchronously, so the previous test's stream may still hold its shards for a moment.
    deadline = time.time() + 30
    while True:
        try:
            kinesis.create_stream(StreamName=name, ShardCount=2)
            break
        except kinesis.exceptions.LimitExceededException:
            if time.time() > deadline:
                raise
            time.sleep(0.5)
    _wait_active(kinesis, name)
    yield name
    kinesis.delete_stream(StreamName=name)


def _put(kinesis, name: str, payloads: list[tuple[str, str]]) -> None:
    """Puts (partition key, data) pairs, in order, 500 per call (the PutRecords maximum)."""
    for i in range(0, len(payloads), 500):
        chunk = payloads[i : i + 500]
        response = kinesis.put_records(
            StreamName=name,
            Records=[{"PartitionKey": key, "Data": data.encode()} for key, data in chunk],
        )
        assert response["FailedRecordCount"] == 0


def _reader(spark, stack, name: str, **options):
    reader = (
        spark.readStream.format("kinesis")
        .option("streamName", name)
        .option("endpointUrl", stack.kinesis_endpoint)
        .option("region", stack.region)
        .option("awsAccessKeyId", stack.aws_access_key)
        .option("awsSecretKey", stack.aws_secret_key)
    )
    for key, value in options.items():
        reader = reader.option(key, str(value))
    return reader.load()


def _run_collecting(spark, stack, name: str, checkpoint: Path, **options) -> dict[int, list]:
    """Runs the source with Trigger.AvailableNow; returns each micro-batch's rows by batch id."""
    batches: dict[int, list] = {}

    def collect(batch_df, batch_id):
        batches[batch_id] = [
            (r.shardId, r.partitionKey, r.sequenceNumber, bytes(r.data).decode())
            for r in batch_df.select("shardId", "partitionKey", "sequenceNumber", "data").collect()
        ]

    query = (
        _reader(spark, stack, name, **options)
        .writeStream.foreachBatch(collect)
        .option("checkpointLocation", str(checkpoint))
        .trigger(availableNow=True)
        .start()
    )
    assert query.awaitTermination(QUERY_TIMEOUT_S), "AvailableNow query did not stop by itself"
    assert query.exception() is None
    return batches


def _payloads(prefix: str, n: int, keys: int = 10) -> list[tuple[str, str]]:
    return [(f"key-{i % keys}", f"{prefix}-{i}") for i in range(n)]


def _data(batches: dict[int, list]) -> list[str]:
    return [row[3] for rows in batches.values() for row in rows]


def test_reads_every_record_exactly_once_from_all_shards(spark, stack, kinesis, stream, tmp_path):
    sent = _payloads("a", 1000)
    _put(kinesis, stream, sent)

    out = tmp_path / "out"
    query = (
        _reader(spark, stack, stream)
        .writeStream.format("parquet")
        .option("path", str(out))
        .option("checkpointLocation", str(tmp_path / "ck"))
        .trigger(availableNow=True)
        .start()
    )
    assert query.awaitTermination(QUERY_TIMEOUT_S)

    df = spark.read.parquet(str(out))
    assert sorted(df.columns) == sorted(
        [
            "data",
            "stream",
            "partitionKey",
            "shardId",
            "sequenceNumber",
            "approximateArrivalTimestamp",
            "subSequenceNumber",
            "aggregateError",
        ]
    )
    rows = df.collect()
    got = sorted(bytes(r.data).decode() for r in rows)
    assert got == sorted(d for _, d in sent), "every record once, none lost, none duplicated"
    assert {r.shardId for r in rows} == {"shardId-000000000000", "shardId-000000000001"}
    assert {r.stream for r in rows} == {stream}
    assert all(r.approximateArrivalTimestamp is not None for r in rows)
    assert all(r.subSequenceNumber is None and r.aggregateError is None for r in rows)  # plain


def test_restart_from_checkpoint_reads_only_new_records(spark, stack, kinesis, stream, tmp_path):
    checkpoint = tmp_path / "ck"
    first = _payloads("first", 300)
    _put(kinesis, stream, first)
    run1 = _run_collecting(spark, stack, stream, checkpoint, maxRecordsPerShard=100)
    assert sorted(_data(run1)) == sorted(d for _, d in first)
    assert len(run1) >= 2, "maxRecordsPerShard=100 bounds each micro-batch"
    assert all(len({r[0] for r in rows}) <= 2 for rows in run1.values())
    assert all(
        sum(1 for r in rows if r[0] == s) <= 100
        for rows in run1.values()
        for s in {r[0] for r in rows}
    )

    second = _payloads("second", 200)
    _put(kinesis, stream, second)
    run2 = _run_collecting(spark, stack, stream, checkpoint, maxRecordsPerShard=100)
    assert sorted(_data(run2)) == sorted(d for _, d in second)
    assert min(run2) > max(run1), "batch ids continue from the checkpoint"

    run3 = _run_collecting(spark, stack, stream, checkpoint)
    assert _data(run3) == [], "nothing new, nothing read"


def test_replay_after_crash_reads_exactly_the_logged_range(spark, stack, kinesis, stream, tmp_path):
    """A crash after the offset log is written and before the batch commits (kill -9) is
    simulated by deleting the last commit: the restart must replay the same records exactly,
    re-reading them from Kinesis since the driver's cache is gone."""
    checkpoint = tmp_path / "ck"
    _put(kinesis, stream, _payloads("c", 400))
    run1 = _run_collecting(spark, stack, stream, checkpoint, maxRecordsPerShard=150)
    last = max(b for b, rows in run1.items() if rows)
    # Batches after the last one with rows are empty (shards seen at their tip); drop their
    # offsets and commits too, as if the crash came right after `last` was planned.
    for batch in range(last, max(run1) + 1):
        logs = ["commits"] if batch == last else ["commits", "offsets"]
        for log in logs:
            for name in (str(batch), f".{batch}.crc"):  # Hadoop's local FS keeps checksums
                (checkpoint / log / name).unlink(missing_ok=True)
    _put(kinesis, stream, _payloads("d", 100))  # must not leak into the replayed batch

    run2 = _run_collecting(spark, stack, stream, checkpoint, maxRecordsPerShard=150)
    assert sorted(run2[last]) == sorted(run1[last]), "replayed batch == original batch"
    later = [d for b, rows in run2.items() if b > last for (_, _, _, d) in rows]
    assert sorted(later) == sorted(d for _, d in _payloads("d", 100))


def test_follows_a_shard_split_parent_before_children(spark, stack, kinesis, stream, tmp_path):
    keys = [f"key-{i}" for i in range(8)]
    before = [(k, f"{k}|{seq:05d}") for seq in range(60) for k in keys]
    _put(kinesis, stream, before)

    shard = kinesis.list_shards(StreamName=stream)["Shards"][0]
    low = int(shard["HashKeyRange"]["StartingHashKey"])
    high = int(shard["HashKeyRange"]["EndingHashKey"])
    kinesis.split_shard(
        StreamName=stream, ShardToSplit=shard["ShardId"], NewStartingHashKey=str((low + high) // 2)
    )
    _wait_active(kinesis, stream)
    after = [(k, f"{k}|{seq:05d}") for seq in range(60, 120) for k in keys]
    _put(kinesis, stream, after)

    batches = _run_collecting(spark, stack, stream, tmp_path / "ck")

    got = _data(batches)
    assert sorted(got) == sorted(d for _, d in before + after), "all records, each once"

    parent = shard["ShardId"]
    children = {
        s["ShardId"]
        for s in kinesis.list_shards(StreamName=stream)["Shards"]
        if s.get("ParentShardId") == parent
    }
    assert len(children) == 2
    # Per key: every record read from the parent comes in an earlier batch than any read from
    # a child, and in sequence order within the key.
    by_key: dict[str, list[tuple[int, str, str]]] = defaultdict(list)
    for batch_id, rows in sorted(batches.items()):
        for shard_id, key, _seq, data in sorted(rows, key=lambda r: int(r[2])):
            by_key[key].append((batch_id, shard_id, data))
    moved = 0
    for key, reads in by_key.items():
        parent_batches = [b for b, s, _ in reads if s == parent]
        child_batches = [b for b, s, _ in reads if s in children]
        if parent_batches and child_batches:
            moved += 1
            assert max(parent_batches) < min(child_batches), key
        in_read_order = [d for _, _, d in reads]
        assert in_read_order == sorted(in_read_order), f"{key} out of order"
    assert moved > 0, "some keys should have records in both the parent and a child"


@pytest.fixture
def other_stream(kinesis):
    """A second stream for the tests that read several (fixtures cannot be asked twice)."""
    name = f"test-src-{uuid.uuid4().hex[:10]}"
    kinesis.create_stream(StreamName=name, ShardCount=1)
    _wait_active(kinesis, name)
    yield name
    kinesis.delete_stream(StreamName=name)


def test_streams_added_and_left_out_between_runs_lose_and_repeat_nothing(
    spark, stack, kinesis, stream, other_stream, tmp_path
):
    """One checkpoint, the stream list changing between runs: a stream that does not exist
    is skipped while the others are read; a stream added is read from its trim horizon; a
    stream left out keeps its position, and resumes there when added back."""
    checkpoint = tmp_path / "ck"
    missing = f"test-src-missing-{uuid.uuid4().hex[:6]}"
    a1, b1 = _payloads("a1", 200), _payloads("b1", 150)
    _put(kinesis, stream, a1)
    _put(kinesis, other_stream, b1)  # before the query knows the stream

    run1 = _run_collecting(spark, stack, f"{stream},{missing}", checkpoint)
    assert sorted(_data(run1)) == sorted(d for _, d in a1)

    run2 = _run_collecting(spark, stack, f"{stream},{other_stream}", checkpoint)
    assert sorted(_data(run2)) == sorted(d for _, d in b1), "the added stream, from its start"

    a2, b2 = _payloads("a2", 120), _payloads("b2", 80)
    _put(kinesis, stream, a2)
    _put(kinesis, other_stream, b2)
    run3 = _run_collecting(spark, stack, other_stream, checkpoint)
    assert sorted(_data(run3)) == sorted(d for _, d in b2), "the stream left out is not read"

    run4 = _run_collecting(spark, stack, f"{other_stream},{stream}", checkpoint)
    assert sorted(_data(run4)) == sorted(d for _, d in a2), "resumed where it stopped"
    assert min(run4) > max(run3) > max(run2) > max(run1), "one query, batch ids go on"


def test_a_query_whose_streams_all_do_not_exist_fails_naming_them(spark, stack, tmp_path):
    names = f"test-src-none-{uuid.uuid4().hex[:6]},test-src-none-{uuid.uuid4().hex[:6]}"
    query = (
        _reader(spark, stack, names)
        .writeStream.format("memory")
        .queryName(f"none_{uuid.uuid4().hex[:6]}")
        .option("checkpointLocation", str(tmp_path / "ck"))
        .trigger(availableNow=True)
        .start()
    )
    with pytest.raises(Exception, match="None of the Kinesis streams"):
        query.awaitTermination(QUERY_TIMEOUT_S)
