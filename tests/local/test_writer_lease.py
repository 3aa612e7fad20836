"""The writer lease against MinIO's conditional writes (marker `faults`): a job refused
while a job on another host holds its checkpoint's lease, and a job that finds the lease
of a killed predecessor on this host takes it at once, writes, and releases it."""

from __future__ import annotations

import socket
import subprocess

import pytest

from lakehouse_job.writer_lease import WriterLease, lease_location
from tests.support import scenario as scripted
from tests.support.checks import assert_sinks_hold
from tests.support.pipeline import Run, tail

pytestmark = pytest.mark.faults


def checkpoint(run: Run) -> str:
    return f"s3a://{run.bucket}/{run.prefix}/checkpoint"


def test_a_live_lease_of_another_host_refuses_the_job_before_it_writes(run: Run) -> None:
    other = WriterLease(run.s3(), checkpoint(run), host="another-host").acquire()
    try:
        job = run.start_job("--available-now", "--writer-lease")
        try:
            code = job.wait(90)  # refused within one renewal of the holder (15 s)
        except subprocess.TimeoutExpired:
            job.kill()
            raise AssertionError(f"the job was not refused:\n{tail(run.log)}") from None
    finally:
        other.release()
    assert code == 3, tail(run.log)
    assert "in use by another-host pid" in run.log.read_text(errors="replace")
    assert run.batches_done() == 0  # nothing written: refused before Spark started


def test_a_killed_predecessors_lease_on_this_host_is_taken_at_once(run: Run) -> None:
    dead = WriterLease(run.s3(), checkpoint(run), host=socket.gethostname()).acquire()
    dead._stop.set()  # as a job killed with -9 leaves it: unrenewed, undeleted
    s = scripted.build(orders=40, ticks=10, seed=71)
    run.put(s.records)
    run.run_job("--available-now", "--writer-lease", "--final-compaction", timeout_s=300)
    assert "taken over from" in run.log.read_text(errors="replace")
    assert_sinks_hold(run, s)
    bucket, key = lease_location(checkpoint(run)) or ("", "")
    listed = run.s3().list_objects_v2(Bucket=bucket, Prefix=key)
    assert listed.get("KeyCount", 0) == 0, "the lease was not released at the end"
