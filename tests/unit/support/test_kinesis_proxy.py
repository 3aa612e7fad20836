"""The Kinesis fault proxy (tests/support/kinesis_proxy.py) against a tiny fake engine."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import boto3
import pytest
from botocore.config import Config

from tests.support import kinesis_proxy as kp

pytestmark = pytest.mark.unit


class FakeEngine(BaseHTTPRequestHandler):
    """Answers every call with an empty GetRecords page and keeps what it was sent."""

    protocol_version = "HTTP/1.1"
    seen: list[tuple[str, bytes]]

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        self.seen.append((self.headers["X-Amz-Target"], body))
        payload = json.dumps(
            {"Records": [], "NextShardIterator": "next", "MillisBehindLatest": 0}
        ).encode()
        self.send_response(200)
        self.send_header("Content-Type", kp.JSON)
        self.send_header("x-amz-crc32", "123")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def engine() -> Iterator[tuple[str, list[tuple[str, bytes]]]]:
    seen: list[tuple[str, bytes]] = []

    class Handler(FakeEngine):
        pass

    Handler.seen = seen
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}", seen
    server.shutdown()
    server.server_close()


def client(endpoint: str):
    # No retries: every call the client makes is one call the proxy decides on.
    return boto3.client(
        "kinesis",
        endpoint_url=endpoint,
        region_name="us-east-1",
        aws_access_key_id="test",
        aws_secret_access_key="test",
        config=Config(retries={"total_max_attempts": 1, "mode": "standard"}),
    )


def test_forwards_calls_untouched_when_no_fault_applies(engine) -> None:
    upstream, seen = engine
    with kp.KinesisFaultProxy([kp.throttling(1.0, ["ListShards"])], upstream=upstream) as proxy:
        result = client(proxy.endpoint).get_records(ShardIterator="it-1", Limit=7)
    assert result["NextShardIterator"] == "next"
    assert result["ResponseMetadata"]["HTTPHeaders"]["x-amz-crc32"] == "123"
    assert seen == [("Kinesis_20131202.GetRecords", b'{"ShardIterator": "it-1", "Limit": 7}')]
    assert proxy.forwarded == {"GetRecords": 1}
    assert sum(proxy.injected.values()) == 0


@pytest.mark.parametrize(
    ("fault", "operation", "status", "code"),
    [
        (kp.throttling(1.0), "get_records", 400, "ProvisionedThroughputExceededException"),
        (kp.expired_iterator(1.0), "get_records", 400, "ExpiredIteratorException"),
        (kp.limit_exceeded(1.0), "list_shards", 400, "LimitExceededException"),
        (kp.internal_failure(1.0), "list_shards", 500, "InternalFailure"),
    ],
)
def test_injects_errors_as_kinesis_writes_them(
    engine, fault: kp.Fault, operation: str, status: int, code: str
) -> None:
    upstream, seen = engine
    args = {"get_records": {"ShardIterator": "it"}, "list_shards": {"StreamName": "s"}}
    with kp.KinesisFaultProxy([fault], upstream=upstream) as proxy:
        kinesis = client(proxy.endpoint)
        with pytest.raises(kinesis.exceptions.ClientError) as raised:
            getattr(kinesis, operation)(**args[operation])
    error = raised.value.response
    assert (error["Error"]["Code"], error["ResponseMetadata"]["HTTPStatusCode"]) == (code, status)
    assert seen == [], "an injected error never reaches the engine"
    assert proxy.injected == {fault.kind: 1}


def test_shares_are_kept_per_operation_and_counted_per_kind(engine) -> None:
    upstream, _ = engine
    faults = [kp.throttling(0.2), kp.expired_iterator(0.1), kp.limit_exceeded(0.5)]
    with kp.KinesisFaultProxy(faults, seed=3, upstream=upstream) as proxy:
        for _ in range(1000):
            proxy.decide("GetRecords")
        for _ in range(1000):
            proxy.decide("GetShardIterator")
        for _ in range(100):
            proxy.decide("DescribeStream")
    assert 150 < proxy.injected["throttled"] < 250
    assert 60 < proxy.injected["expired_iterator"] < 140
    assert 430 < proxy.injected["limit_exceeded"] < 570
    assert (
        proxy.injected_by_operation[("limit_exceeded", "GetShardIterator")]
        == (proxy.injected["limit_exceeded"])
    )
    assert proxy.forwarded["DescribeStream"] == 100
    assert (
        proxy.forwarded["GetRecords"]
        + proxy.injected["throttled"]
        + proxy.injected["expired_iterator"]
        == 1000
    )


def test_the_same_seed_gives_the_same_answers_per_operation() -> None:
    def answers(seed: int) -> list[str | None]:
        proxy = kp.KinesisFaultProxy([kp.throttling(0.3), kp.internal_failure(0.1)], seed=seed)
        # Interleaving other operations must not shift GetRecords' answers.
        out = []
        for n in range(200):
            if n % 3 == 0:
                proxy.decide("ListShards")
            fault = proxy.decide("GetRecords")
            out.append(fault.kind if fault else None)
        return out

    assert answers(11) == answers(11)
    assert answers(11) != answers(12)


def test_an_outage_fails_every_call_of_the_operation_for_its_duration() -> None:
    proxy = kp.KinesisFaultProxy([kp.internal_failure(0.5, ["GetRecords"], lasting_s=0.3)], seed=1)
    while proxy.decide("GetRecords") is None:
        pass
    assert proxy.outages == {"internal_failure": 1}
    during = [proxy.decide("GetRecords") for _ in range(50)]
    assert all(f is not None for f in during), "every call fails while the outage lasts"
    assert proxy.decide("ListShards") is None, "other operations are not affected"
    time.sleep(0.35)
    after = [proxy.decide("GetRecords") for _ in range(50)]
    assert None in after


def test_set_faults_turns_injection_off(engine) -> None:
    upstream, _ = engine
    with kp.KinesisFaultProxy([kp.throttling(1.0)], upstream=upstream) as proxy:
        assert proxy.decide("GetRecords") is not None
        proxy.set_faults([])
        assert proxy.decide("GetRecords") is None


def test_shares_above_one_per_operation_are_refused() -> None:
    with pytest.raises(ValueError, match="GetRecords add up to"):
        kp.KinesisFaultProxy([kp.throttling(0.7), kp.expired_iterator(0.4)])
    with pytest.raises(ValueError, match="any other operation"):
        kp.KinesisFaultProxy([kp.internal_failure(1.5)])


def test_an_unreachable_engine_is_a_502() -> None:
    with kp.KinesisFaultProxy(upstream="http://127.0.0.1:9") as proxy:
        kinesis = client(proxy.endpoint)
        with pytest.raises(kinesis.exceptions.ClientError) as raised:
            kinesis.list_shards(StreamName="s")
    assert raised.value.response["ResponseMetadata"]["HTTPStatusCode"] == 502
