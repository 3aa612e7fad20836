"""lakehouse_job.writer_lease against an in-memory S3 with conditional writes (the real
one, MinIO, in tests/local/test_writer_lease.py)."""

from __future__ import annotations

import hashlib
import io
from typing import Any

import pytest

from lakehouse_job.writer_lease import WriterLease, lease_location
from lakehouse_job.writer_lock import WriterLockError

pytestmark = pytest.mark.unit

URI = "s3a://lake/jobs/orders/checkpoint"


class PreconditionFailed(Exception):
    def __init__(self) -> None:
        super().__init__("At least one of the pre-conditions you specified did not hold")
        self.response = {"Error": {"Code": "PreconditionFailed"}}


class FakeS3:
    """Objects with ETags; If-None-Match and If-Match on put, as S3 and MinIO honour them
    (`honour=False`: an endpoint that ignores them)."""

    class exceptions:
        class NoSuchKey(Exception):
            pass

    def __init__(self, honour: bool = True) -> None:
        self.objects: dict[tuple[str, str], tuple[bytes, str]] = {}
        self.honour = honour
        self.puts = 0

    def put_object(self, Bucket: str, Key: str, Body: bytes, **condition: str) -> dict:
        current = self.objects.get((Bucket, Key))
        if self.honour and (
            (condition.get("IfNoneMatch") == "*" and current is not None)
            or ("IfMatch" in condition and (current is None or current[1] != condition["IfMatch"]))
        ):
            raise PreconditionFailed()
        self.puts += 1
        etag = f'"{hashlib.md5(Body + str(self.puts).encode()).hexdigest()}"'
        self.objects[(Bucket, Key)] = (Body, etag)
        return {"ETag": etag}

    def get_object(self, Bucket: str, Key: str) -> dict:
        if (Bucket, Key) not in self.objects:
            raise self.exceptions.NoSuchKey()
        body, etag = self.objects[(Bucket, Key)]
        return {"Body": io.BytesIO(body), "ETag": etag}

    def delete_object(self, Bucket: str, Key: str) -> None:
        self.objects.pop((Bucket, Key), None)


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def lease(s3: FakeS3, host: str, clock: Clock | None = None, **kw: Any) -> WriterLease:
    clock = clock or Clock()

    def sleep(seconds: float) -> None:
        clock.now += seconds

    return WriterLease(s3, URI, ttl_s=60, host=host, clock=clock, sleep=sleep, **kw)


def test_the_lease_sits_beside_an_s3_path_and_nowhere_else() -> None:
    assert lease_location(URI) == ("lake", "jobs/orders/checkpoint.writer-lease")
    assert lease_location("s3://lake/warehouse/") == ("lake", "warehouse.writer-lease")
    assert lease_location("/tmp/checkpoint") is None
    with pytest.raises(ValueError, match="s3:// or s3a://"):
        WriterLease(FakeS3(), "/tmp/checkpoint")


def test_a_live_holder_on_another_host_refuses_the_second_job() -> None:
    s3 = FakeS3()
    first = lease(s3, "host-a").acquire()
    clock = Clock()
    second = lease(s3, "host-b", clock)

    def holder_renews_meanwhile(seconds: float) -> None:
        clock.now += seconds
        first.renew()

    second.sleep = holder_renews_meanwhile
    with pytest.raises(WriterLockError, match=r"in use by host-a pid \d+ .* renewed it"):
        second.acquire()
    first.release()
    assert s3.objects == {}


def test_a_holder_gone_silent_for_its_time_to_live_is_taken_over() -> None:
    s3 = FakeS3()
    gone = lease(s3, "host-a").acquire()
    gone._stop.set()  # a host that died: nothing renews its lease
    clock = Clock()
    taker = lease(s3, "host-b", clock).acquire()
    assert clock.now >= 60  # watched for a whole time to live first
    assert b"host-b" in s3.objects[("lake", "jobs/orders/checkpoint.writer-lease")][0]
    assert not gone.renew()  # the old holder, were it to wake, finds it lost
    taker.release()


def test_a_lease_of_this_host_is_a_dead_predecessors_and_is_taken_at_once() -> None:
    s3 = FakeS3()
    lease(s3, "host-a").acquire()._stop.set()  # killed: its flock went with it
    clock = Clock()
    again = lease(s3, "host-a", clock).acquire()
    assert clock.now == 0
    again.release()


def test_a_lease_changed_by_another_or_unrenewed_too_long_is_lost() -> None:
    s3 = FakeS3()
    clock = Clock()
    held = lease(s3, "host-a", clock).acquire()
    held._stop.set()
    assert held.keep()
    s3.put_object(Bucket="lake", Key="jobs/orders/checkpoint.writer-lease", Body=b"{}")
    assert not held.keep()  # someone else wrote it

    other = lease(FakeS3(), "host-a", clock).acquire()
    other._stop.set()

    def unreachable(**_: Any) -> dict:
        raise ConnectionError("S3 down")

    other.client.put_object = unreachable
    clock.now += 30
    assert other.keep()  # not renewed, but not yet too long
    clock.now += 20
    assert not other.keep()  # 50 s without a renewal: over three quarters of 60


def test_an_endpoint_that_ignores_conditions_is_refused() -> None:
    s3 = FakeS3(honour=False)
    with pytest.raises(WriterLockError, match="ignored If-None-Match"):
        lease(s3, "host-a").acquire()
    assert s3.objects == {}
