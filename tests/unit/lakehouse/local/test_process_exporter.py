"""The local services' process metrics: each service's process group, read from /proc."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator

import pytest
from prometheus_client import CollectorRegistry, generate_latest

from lakehouse.core.config import load_settings
from lakehouse.local import process_exporter, stack
from lakehouse.local.supervisor import ServiceStatus

pytestmark = pytest.mark.unit

# A service whose leader starts a child that does the work, as a JVM's launcher script does.
# The child burns a second of its own CPU whatever the machine's speed (a fixed loop took
# under 0.3 s on a fast machine: the check below then waited for CPU that never came).
CHILD = "import time; x = b'x' * (64 << 20)\nwhile time.process_time() < 1.0: pass\ninput()"
BUSY_CHILD = f"import subprocess, sys; subprocess.run([sys.executable, '-c', {CHILD!r}])"


@pytest.fixture
def service() -> Iterator[subprocess.Popen]:
    process = subprocess.Popen(
        [sys.executable, "-c", BUSY_CHILD], stdin=subprocess.PIPE, start_new_session=True
    )
    yield process
    process.kill()
    process.wait()


def test_each_service_reports_its_whole_group(
    service: subprocess.Popen, monkeypatch: pytest.MonkeyPatch
) -> None:
    rows = [
        ServiceStatus("minio", "running", service.pid),
        ServiceStatus("trino", "dead", 999_999_999),
        ServiceStatus("metastore", "stopped"),
    ]
    monkeypatch.setattr(stack, "statuses", lambda _: rows)
    registry = CollectorRegistry()
    registry.register(process_exporter.ServiceCollector(load_settings({})))

    def sample(name: str, service_name: str) -> float | None:
        return registry.get_sample_value(name, {"service": service_name})

    # The child's 64 MiB and its CPU count as the service's. Waited for by a deadline, not
    # a number of polls: beside the end-to-end tests on 2 cores the child can get well
    # under a tenth of a core for a while.
    deadline = time.monotonic() + 120
    while True:
        rss = sample("lakehouse_service_resident_bytes", "minio") or 0
        if rss > 64 * 2**20 and (sample("lakehouse_service_cpu_seconds_total", "minio") or 0) > 0.3:
            break
        if time.monotonic() > deadline:
            pytest.fail(generate_latest(registry).decode())
        service.poll()
        time.sleep(0.1)
    assert sample("lakehouse_service_up", "minio") == 1
    assert sample("lakehouse_service_up", "trino") == 0
    assert sample("lakehouse_service_up", "metastore") == 0
    assert sample("lakehouse_service_resident_bytes", "trino") is None
