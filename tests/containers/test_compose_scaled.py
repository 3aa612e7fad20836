"""A scaled stack (`--scale spark-worker=2 --scale locust-worker=3`) from a fresh clone:
a load run started from the Locust web UI runs on all three Locust workers, the job's
tasks run on both Spark workers, and `lakehouse verify --compose` finds the UI run's
ledger exactly in Trino (CoW while the job runs, MoR read-optimized after its stop)."""

from __future__ import annotations

import subprocess
import sys
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator

import pytest

from tests.containers.conftest import Stack
from tests.containers.test_compose_stack import stop_job

pytestmark = pytest.mark.containers

SPARK_WORKERS = 2
LOCUST_WORKERS = 3


@pytest.fixture(scope="module")
def scaled(start_stack) -> Iterator[Stack]:
    stack = start_stack(
        "lakehouse-it-scaled",
        "--scale", f"spark-worker={SPARK_WORKERS}",
        "--scale", f"locust-worker={LOCUST_WORKERS}",
    )  # fmt: skip
    yield stack
    stack.down()


def wait_for(what: str, check, timeout_s: float = 120):
    deadline = time.monotonic() + timeout_s
    while not (result := check()):
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(2)
    return result


def locust_stats(stack: Stack) -> dict:
    stats = stack.get_json("LOCUST_HOST_PORT", "/stats/requests")
    assert isinstance(stats, dict)
    return stats


def verify_compose(stack: Stack, *args: str) -> subprocess.CompletedProcess[str]:
    """`lakehouse verify --compose` as a user runs it, against this test's project."""
    return subprocess.run(
        [sys.executable, "-m", "lakehouse.cli", "verify", "--compose", *args],
        env=stack.env(),
        capture_output=True,
        text=True,
        timeout=900,
    )


def test_a_web_ui_run_on_scaled_workers_lands_exactly(scaled: Stack) -> None:
    stats = wait_for(
        f"{LOCUST_WORKERS} Locust workers at the master",
        lambda: (s := locust_stats(scaled)) and len(s.get("workers", [])) == LOCUST_WORKERS and s,
    )
    assert stats["state"] in ("ready", "stopped"), stats["state"]

    # What the web UI's start button posts (the loadgen options are its custom fields).
    form = {
        "user_count": LOCUST_WORKERS, "spawn_rate": LOCUST_WORKERS,
        "events_per_sec": 10, "key_cardinality": 400,
    }  # fmt: skip
    request = urllib.request.Request(
        scaled.url("LOCUST_HOST_PORT", "/swarm"),
        data=urllib.parse.urlencode(form).encode(),
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        assert response.status == 200
    time.sleep(30)
    running = locust_stats(scaled)
    busy = [w for w in running["workers"] if w["user_count"] > 0]
    assert len(busy) == LOCUST_WORKERS, running["workers"]
    stop = urllib.request.Request(scaled.url("LOCUST_HOST_PORT", "/stop"), method="POST")
    with urllib.request.urlopen(stop, timeout=30):
        pass
    wait_for("the UI run to stop", lambda: locust_stats(scaled)["state"] == "stopped")
    summaries = lambda: scaled.compose(  # noqa: E731
        "exec", "-T", "locust-master", "sh", "-c", "ls /ledger/ui/*.summary.json"
    ).stdout.split()
    wait_for("every worker's ledger summary", lambda: len(summaries()) >= LOCUST_WORKERS)

    cow = verify_compose(scaled)
    assert cow.returncode == 0, cow.stdout[-4000:] + cow.stderr[-2000:] + scaled.diagnosis()
    assert "acknowledged" in cow.stdout

    # The job's tasks ran on both Spark workers (its executors, before the job stops).
    apps = scaled.get_json("JOB_UI_HOST_PORT", "/api/v1/applications")
    assert isinstance(apps, list) and apps
    executors = scaled.get_json(
        "JOB_UI_HOST_PORT", f"/api/v1/applications/{apps[0]['id']}/allexecutors"
    )
    assert isinstance(executors, list)
    hosts = {
        e["hostPort"].rsplit(":", 1)[0]
        for e in executors
        if e["id"] != "driver" and e["totalTasks"] > 0
    }
    assert len(hosts) == SPARK_WORKERS, executors

    stop_job(scaled)  # compacts every MoR table fully
    mor = verify_compose(scaled, "--table-suffix", "_mor_ro")
    assert mor.returncode == 0, mor.stdout[-4000:] + mor.stderr[-2000:] + scaled.diagnosis()
