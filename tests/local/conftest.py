"""The local-mode stack, brought up once per test session and torn down at the end.

If a stack is already running (`make local-up`), the tests use it and leave it
running; otherwise they start one and, at the end, stop it and check that no
process and no port of ours is left.
"""

from __future__ import annotations

import contextlib
import os
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from lakehouse.core.clients import kinesis_client
from lakehouse.core.config import Settings, load_settings
from lakehouse.local import installers
from lakehouse.local import stack as stack_module
from lakehouse.local.class_archive import ARCHIVE_ENV
from lakehouse.local.job_launcher import JIT_ENV, job_env
from lakehouse.local.services import SERVICES_JIT_ENV
from tests.support import scenario as scripted
from tests.support import stack_sessions
from tests.support.leftovers import SESSION_ENV
from tests.support.pipeline import Run
from tests.support.xdist_modules import longest_first

# The jobs these tests start live a minute or two, the stack they start the session: C1
# only (job_launcher.QUICK_JIT, services.SERVICES_JIT_ENV).
os.environ.setdefault(JIT_ENV, "quick")
os.environ.setdefault(SERVICES_JIT_ENV, "quick")


@dataclass(frozen=True)
class Stack:
    settings: Settings
    kinesis_endpoint: str
    region: str
    aws_access_key: str
    aws_secret_key: str
    s3_endpoint: str
    s3_access_key: str
    s3_secret_key: str
    bucket: str
    hms_uri: str
    trino_host: str
    trino_port: int
    database: str


@pytest.fixture(scope="session")
def stack_settings() -> Settings:
    return load_settings()


def _record_class_archive(settings: Settings, tmp: Path) -> None:
    """The job's class-data archive (lakehouse.local.class_archive), recorded before the first
    test when there is none (a fresh clone, a new jar): otherwise the first job to exit
    records it minutes in, after the longest tests started without it. A short job over
    every kind of record loads the classes the tests' jobs do; call under stack_sessions.lock, so
    that the other worker waits for the archive rather than starting its tests without it.
    Measured on CI's 2 cores: the end-to-end part 17 min 36 s without the archive at the
    start, 14 min 21 s with it; this run costs about 40 s."""
    archive = job_env(settings, record_classes=True).get(ARCHIVE_ENV)
    if archive is None or Path(archive).exists():
        return
    run = Run.new(settings, tmp)
    run.create_stream(shards=2)
    try:
        run.put(scripted.build(orders=60, ticks=20, seed=1).records)
        run.run_job("--available-now", "--final-compaction")
    except AssertionError as failed:  # the tests that need the job will say what is wrong
        warnings.warn(f"the warm-up job failed, no class-data archive: {failed}", stacklevel=1)
    finally:
        run.kinesis().delete_stream(StreamName=run.stream, EnforceConsumerDeletion=True)
    if not Path(archive).exists():
        warnings.warn(f"the warm-up job recorded no class-data archive: {run.log}", stacklevel=1)


@pytest.fixture(scope="session")
def stack(stack_settings: Settings, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    """The stack: a running one is used and left running; otherwise the first session
    starts it and the last one to finish stops it (a marker file says the tests own it)."""
    settings = stack_settings
    with stack_sessions.lock(settings):
        if not all(s.state == "running" for s in stack_module.statuses(settings)):
            stack_module.up(settings)
            stack_sessions.started_marker(settings).touch()
        stack_sessions.join(settings, os.environ.get(SESSION_ENV, ""))
        _record_class_archive(settings, tmp_path_factory.mktemp("class-archive"))
    yield Stack(
        settings=settings,
        kinesis_endpoint=settings.kinesis_endpoint,
        region=settings["AWS_REGION"],
        aws_access_key="test",
        aws_secret_key="test",
        s3_endpoint=settings.s3_endpoint,
        s3_access_key=settings["S3_ACCESS_KEY"],
        s3_secret_key=settings["S3_SECRET_KEY"],
        bucket=settings["LAKEHOUSE_BUCKET"],
        hms_uri=settings.hms_uri,
        trino_host="127.0.0.1",
        trino_port=settings.port("TRINO_PORT"),
        database=settings["LAKEHOUSE_DATABASE"],
    )
    if not stack_sessions.leave(settings, pid=os.getpid()):
        return
    # Down must leave nothing behind: no live process from a PID file, no bound port.
    leftovers = [s.name for s in stack_module.statuses(settings) if s.state == "running"]
    assert leftovers == [], f"services still running after down: {leftovers}"
    assert stack_module.bound_ports(settings) == [], "ports still bound after down"


@pytest.fixture(scope="session")
def kinesis(stack: Stack):
    """A boto3 Kinesis client for the local stack."""
    return kinesis_client(stack.settings.endpoints)


@pytest.fixture(scope="session")
def spark_jars(stack_settings: Settings) -> list[str]:
    jars = installers.ensure_spark_jars(stack_settings)
    source = installers.ensure_kinesis_source_jar(stack_settings)
    return [str(j) for j in [*jars, source]]


@pytest.fixture
def run(stack: Stack, tmp_path: Path) -> Iterator[Run]:
    """An isolated run of the job: its own stream (2 shards), tables and checkpoint. The
    stream is deleted afterwards: the local engines cap the shards of all streams (50)."""
    r = Run.new(stack.settings, tmp_path)
    r.create_stream(shards=2)
    yield r
    client = r.kinesis()
    with contextlib.suppress(client.exceptions.ResourceNotFoundException):  # a test's own
        client.delete_stream(StreamName=r.stream, EnforceConsumerDeletion=True)


# pytest-xdist hands tests out in collection order (tests/support/xdist_modules.py), and a
# worker that runs out of tests idles until the other's last one ends: the longest go
# first, so that the short ones fill in beside them at the end (measured: a 6-minute
# crash-point test handed out last left the other worker idle for 5.6 minutes).
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    order = longest_first([item.nodeid for item in items])
    items[:] = [items[i] for i in order]
