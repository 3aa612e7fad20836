"""The job's class-data archive recorded before a benchmark measures anything.

The benchmark's jobs map the archive of their class path (lakehouse.local.class_archive) but do
not record one: a run recording it would pay for writing it at exit. After a change of jar
or JDK there is none until a job records it, and every run would start without it (about
twice the start-up CPU). So when there is none, a short job over a few thousand orders,
which loads what the measured jobs load, records it first, as the end-to-end tests do.
"""

from __future__ import annotations

import subprocess
import uuid
from collections.abc import Callable
from pathlib import Path

from lakehouse.bench.drain import available_now_args, fill, order_payloads
from lakehouse.core.bootstrap import delete_stream, ensure_stream
from lakehouse.core.clients import kinesis_client
from lakehouse.core.config import Settings
from lakehouse.local.class_archive import ARCHIVE_ENV
from lakehouse.local.job_launcher import job_command, job_env

WARMUP_EVENTS = 4_000


def ensure_class_archive(settings: Settings, out: Path, say: Callable[[str], None]) -> None:
    env = job_env(settings, record_classes=True)
    archive = env.get(ARCHIVE_ENV)
    if archive is None or Path(archive).exists():
        return
    say("  recording the job's class-data archive first (a short job; once per class path)")
    tag = uuid.uuid4().hex[:6]
    stream = f"warmup-{tag}"
    workdir = out / f"class-archive-warmup-{tag}"
    workdir.mkdir(parents=True, exist_ok=True)
    kinesis = kinesis_client(settings.endpoints)
    ensure_stream(kinesis, stream, shards=1)
    try:
        fill(kinesis, stream, order_payloads(WARMUP_EVENTS, WARMUP_EVENTS // 4), lambda _: None)
        args = available_now_args(settings, stream, f"warmup_{tag}", workdir)
        with open(workdir / "job.log", "wb") as log:
            code = subprocess.run(job_command(args), env=env, stdout=log, stderr=log).returncode
    finally:
        delete_stream(kinesis, stream)
    if code != 0 or not Path(archive).exists():
        say(f"    no archive recorded (job exit {code}, {workdir}/job.log): runs start without")
