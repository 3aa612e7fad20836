"""lakehouse_job.writer_lock: one writer per checkpoint."""

import subprocess
import sys
from pathlib import Path

import pytest

from lakehouse_job.writer_lock import WriterLock, WriterLockError

pytestmark = pytest.mark.unit

HOLD = """
import sys, time
from lakehouse_job.writer_lock import WriterLock
lock = WriterLock(sys.argv[1], sys.argv[2]).acquire()  # kept: a collected lock is released
print("held", flush=True)
time.sleep(60)
"""


def test_a_second_writer_is_refused_with_the_holder_named(tmp_path: Path) -> None:
    first = WriterLock("s3a://b/checkpoints/x", tmp_path).acquire()
    with pytest.raises(WriterLockError, match=r"s3a://b/checkpoints/x is in use by pid \d+"):
        WriterLock("s3a://b/checkpoints/x", tmp_path).acquire()
    WriterLock("s3a://b/checkpoints/other", tmp_path).acquire().release()  # another checkpoint
    first.release()
    WriterLock("s3a://b/checkpoints/x", tmp_path).acquire().release()  # free again


def test_a_killed_holder_leaves_no_stale_lock(tmp_path: Path) -> None:
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, "cp", str(tmp_path)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        with pytest.raises(WriterLockError):
            WriterLock("cp", tmp_path).acquire()
    finally:
        holder.kill()
        holder.wait()
    WriterLock("cp", tmp_path).acquire().release()
