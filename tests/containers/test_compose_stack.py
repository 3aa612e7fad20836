"""docker compose: the compose file validates with the real Compose CLI, and the whole
stack (LocalStack, MinIO, Postgres, Hive Metastore, Spark master/worker/job driver,
Locust, Trino) carries load from Locust into Hudi tables that Trino reads back exactly
as the load generator's ledger says."""

from __future__ import annotations

import json
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest

from tests.containers import harness
from tests.containers.conftest import Stack

pytestmark = pytest.mark.containers

RUN = "it"  # ledger sub-folder in the ledger volume


def compose_json(engine: None) -> dict:
    out = subprocess.run(
        [*harness.compose_command(), "config", "--format", "json"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    return json.loads(out.stdout)


def test_compose_file_validates_with_the_compose_cli(engine: None) -> None:
    version = subprocess.run(["docker", "compose", "version"], capture_output=True, text=True)
    assert version.returncode == 0 and "v2." in version.stdout, version
    check = subprocess.run(
        [*harness.compose_command(), "config", "--quiet"], capture_output=True, text=True
    )
    assert check.returncode == 0, check.stderr
    config = compose_json(engine)
    services = config["services"]
    assert set(services) >= {
        "localstack", "minio", "postgres", "metastore", "trino", "spark-master",
        "spark-worker", "job", "locust-master", "locust-worker",
    }  # fmt: skip
    for name, service in services.items():
        assert service.get("healthcheck", {}).get("test"), f"{name} has no healthcheck"
        for dep, cond in service.get("depends_on", {}).items():
            assert cond["condition"] == "service_healthy", f"{name} -> {dep}: {cond}"
        for port in service.get("ports", []):
            assert port.get("host_ip") == "127.0.0.1", f"{name} publishes {port}"
    assert not services["spark-worker"].get("ports"), "scalable services publish no port"
    assert not services["locust-worker"].get("ports"), "scalable services publish no port"


def _get(url: str, timeout: float = 5) -> tuple[int, bytes]:
    with urllib.request.urlopen(url, timeout=timeout) as response:
        return response.status, response.read()


def test_every_ui_answers(stack: Stack) -> None:
    p = stack.ports
    urls = {
        "localstack health": f"http://127.0.0.1:{p['KINESIS_HOST_PORT']}/_localstack/health",
        "minio S3": f"http://127.0.0.1:{p['MINIO_HOST_PORT']}/minio/health/live",
        "minio console": f"http://127.0.0.1:{p['MINIO_CONSOLE_HOST_PORT']}/",
        "trino": f"http://127.0.0.1:{p['TRINO_HOST_PORT']}/v1/info",
        "spark master UI": f"http://127.0.0.1:{p['SPARK_MASTER_UI_HOST_PORT']}/json/",
        "job (Spark driver) UI": f"http://127.0.0.1:{p['JOB_UI_HOST_PORT']}/api/v1/applications",
        "locust UI": f"http://127.0.0.1:{p['LOCUST_HOST_PORT']}/",
    }
    failures: dict[str, object] = {}
    for name, url in urls.items():
        try:
            status, _ = _get(url)
            if status != 200:
                failures[name] = status
        except Exception as error:
            failures[name] = repr(error)
    assert not failures, failures
    master = json.loads(_get(urls["spark master UI"])[1])
    assert master["aliveworkers"] >= 1
    assert any(app["name"] == "lakehouse-streaming-job" for app in master["activeapps"])


def _compose(stack: Stack, *args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run(stack.command(*args), capture_output=True, text=True, timeout=timeout)


def _processed(stack: Stack) -> int:
    out = _compose(stack, "exec", "-T", "job", "cat", "/var/lib/lakehouse/job-metrics.jsonl")
    if out.returncode != 0:
        return 0
    return sum(json.loads(line)["records"] for line in out.stdout.splitlines() if line.strip())


def test_locust_load_lands_in_trino_exactly(stack: Stack, tmp_path: Path) -> None:
    from lakehouse.clients import Endpoints, trino_connection
    from lakehouse_tables.declarations import load_tables
    from loadgen.ledger import read_ledger
    from loadgen.verify import verify_tables

    settings = harness.settings()
    load = _compose(
        stack, "exec", "-T", "locust-master",
        "python", "-m", "loadgen.runner",
        "--stream-name", settings["KINESIS_STREAM_NAME"],
        "--kinesis-endpoint", "http://localstack:4566",
        "--region", settings["AWS_REGION"], "--workers", "2", "--users", "4",
        "--run-time", "30s", "--stop-timeout", "20", "--master-port", "5600",
        "--ledger-dir", f"/ledger/{RUN}", "--event-model", "orders", "--seed", "11",
        "--events-per-sec", "10", "--key-cardinality", "300",
    )  # fmt: skip
    assert load.returncode == 0, f"locust failed:\n{load.stdout[-3000:]}\n{load.stderr[-3000:]}"

    ledger = tmp_path / "ledger"
    copy = _compose(stack, "cp", f"locust-master:/ledger/{RUN}", str(ledger))
    assert copy.returncode == 0, copy.stderr
    acked = sum(1 for entry in read_ledger(ledger) if entry.get("acked"))
    assert acked > 100, f"only {acked} records acknowledged"

    deadline = time.monotonic() + 600
    while (done := _processed(stack)) < acked:
        assert time.monotonic() < deadline, f"the job processed {done} of {acked} records"
        time.sleep(3)

    # docker stop: the job ends its micro-batch, compacts MoR fully, and exits 0.
    stop = _compose(stack, "stop", "-t", "240", "job", timeout=300)
    assert stop.returncode == 0, stop.stderr
    state = subprocess.run(
        ["docker", "inspect", "-f", "{{.State.ExitCode}}", f"{'lakehouse-it'}-job-1"],
        capture_output=True, text=True,
    )  # fmt: skip
    assert state.stdout.strip() == "0", _compose(stack, "logs", "--tail=80", "job").stdout

    tables = load_tables()
    conn = trino_connection(
        Endpoints(region=settings["AWS_REGION"], trino=f"http://127.0.0.1:{stack.ports['TRINO_HOST_PORT']}"),
        "hudi", settings["LAKEHOUSE_DATABASE"], user="it",
    )  # fmt: skip
    for suffix in ("_cow", "_mor_ro"):
        diffs = verify_tables(
            tables, str(ledger), conn, "hudi", settings["LAKEHOUSE_DATABASE"],
            event_types=["orders"], table_suffix=suffix, where="NOT _is_deleted",
        )  # fmt: skip
        assert diffs and all(d.ok for d in diffs), [d.summary() for d in diffs]
