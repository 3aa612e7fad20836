"""The whole stack from a fresh clone with plain `docker compose up` (LocalStack, MinIO,
Postgres, Hive Metastore, Spark master/worker/job driver, Locust, Trino, Prometheus)
carries load from Locust into Hudi tables that Trino reads back exactly as the load
generator's ledger says, while Prometheus scrapes every service and each dashboard panel
has data; with the `cdc` profile, PostgreSQL's changes reach the lake through Debezium;
`docker compose down -v` then leaves nothing of the project behind."""

from __future__ import annotations

import dataclasses
import json
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from lakehouse.core.clients import Endpoints, trino_connection
from lakehouse.core.config import Settings
from tests.containers.conftest import Stack

pytestmark = pytest.mark.containers

RUN = "it"  # ledger sub-folder in the ledger volume


@pytest.fixture(scope="module")
def stack(start_stack) -> Iterator[Stack]:
    stack = start_stack("lakehouse-it", profiles=("cdc",))
    yield stack
    stack.down()  # again, if the last test did it already


def _get(url: str, timeout: float = 15) -> int:
    with urllib.request.urlopen(url, timeout=timeout) as response:
        return int(response.status)


def test_every_ui_answers(stack: Stack) -> None:
    urls = {
        "localstack health": stack.url("KINESIS_HOST_PORT", "/_localstack/health"),
        "minio S3": stack.url("MINIO_HOST_PORT", "/minio/health/live"),
        "minio console": stack.url("MINIO_CONSOLE_HOST_PORT"),
        "trino": stack.url("TRINO_HOST_PORT", "/v1/info"),
        "spark master UI": stack.url("SPARK_MASTER_UI_HOST_PORT", "/json/"),
        "job (Spark driver) UI": stack.url("JOB_UI_HOST_PORT", "/api/v1/applications"),
        "locust UI": stack.url("LOCUST_HOST_PORT"),
        "jupyter": stack.url("JUPYTER_HOST_PORT", "/api"),
        "prometheus": stack.url("PROMETHEUS_HOST_PORT", "/-/ready"),
    }
    # Each answers within a minute: on a busy 2-core machine the job's driver, writing its
    # first batches beside the whole stack, once took more than 15 s over one request (CI).
    failures: dict[str, object] = {}
    for name, url in urls.items():
        deadline = time.monotonic() + 60
        while True:
            try:
                status: object = _get(url)
            except Exception as error:
                status = repr(error)
            if status == 200 or time.monotonic() > deadline:
                break
            time.sleep(2)
        if status != 200:
            failures[name] = status
    assert not failures, failures
    master = stack.get_json("SPARK_MASTER_UI_HOST_PORT", "/json/")
    assert isinstance(master, dict) and master["aliveworkers"] >= 1
    assert any(app["name"] == "lakehouse-streaming-job" for app in master["activeapps"])


def records_processed(stack: Stack, folder: Path) -> int:
    """The job's committed records (its metrics file; readable when the job has stopped)."""
    target = folder / "job-metrics.jsonl"
    copy = stack.compose("cp", "job:/var/lib/lakehouse/job-metrics.jsonl", str(target))
    if copy.returncode != 0:
        return 0
    return sum(json.loads(line)["records"] for line in target.read_text().splitlines() if line)


def stop_job(stack: Stack) -> None:
    """docker stop: the job ends its micro-batch, compacts MoR fully, and exits 0."""
    stop = stack.compose("stop", "-t", "240", "job", timeout=300)
    assert stop.returncode == 0, stop.stderr
    state = stack.compose("ps", "--all", "--format", "json", "job")
    (job,) = [json.loads(line) for line in state.stdout.splitlines() if line.strip()]
    assert job["ExitCode"] == 0, stack.compose("logs", "--tail=80", "job").stdout


def test_locust_load_lands_in_trino_exactly(
    stack: Stack, settings: Settings, tmp_path: Path
) -> None:
    from lakehouse_tables.declarations import load_tables
    from loadgen.ledger import read_ledger
    from loadgen.verify import verify_tables

    load = stack.compose(
        "exec", "-T", "locust-master",
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
    copy = stack.compose("cp", f"locust-master:/ledger/{RUN}", str(ledger))
    assert copy.returncode == 0, copy.stderr
    acked = sum(1 for entry in read_ledger(ledger) if entry.get("acked"))
    assert acked > 100, f"only {acked} records acknowledged"

    deadline = time.monotonic() + 600
    while (done := records_processed(stack, tmp_path)) < acked:
        assert time.monotonic() < deadline, (
            f"the job processed {done} of {acked} records\n" + stack.diagnosis()
        )
        time.sleep(3)
    stop_job(stack)

    database = settings["LAKEHOUSE_DATABASE"]
    trino = Endpoints(region=settings["AWS_REGION"], trino=stack.url("TRINO_HOST_PORT", ""))
    conn = trino_connection(trino, "hudi", database, user="it")
    for suffix in ("_cow", "_mor_ro"):
        diffs = verify_tables(
            load_tables(), str(ledger), conn, "hudi", database,
            event_types=["orders"], table_suffix=suffix, where="NOT _is_deleted",
        )  # fmt: skip
        assert diffs and all(d.ok for d in diffs), [d.summary() for d in diffs]


def test_trino_cli_and_a_notebook_run_in_their_containers(stack: Stack) -> None:
    """`docker compose exec trino trino` answers, and the quickstart notebook runs top to
    bottom in the jupyter service (its kernel reaches the stack by service name). After
    the ledger check, which wants the tables to hold the load test's rows only."""
    up = stack.compose("up", "-d", "--wait", "job", timeout=600)  # the last test stopped it
    assert up.returncode == 0, up.stderr[-3000:]
    cli = stack.compose("exec", "-T", "trino", "trino", "--execute", "SELECT 6 * 7")
    assert cli.returncode == 0 and cli.stdout.strip() == '"42"', cli.stdout + cli.stderr
    run = stack.compose(
        "exec", "-T", "jupyter", "jupyter", "nbconvert", "--to", "notebook", "--execute",
        "--ExecutePreprocessor.timeout=600", "--output", "/tmp/01-quickstart.ipynb",
        "/opt/lakehouse/notebooks/01-quickstart.ipynb",
        timeout=900,
    )  # fmt: skip
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-5000:]


def test_prometheus_scrapes_every_service_and_every_dashboard_panel_has_data(
    stack: Stack,
) -> None:
    """A load started from the Locust web UI's API moves every series the Grafana dashboards
    chart (tests.support.dashboards), and every target Prometheus scrapes is up. After the
    ledger check (this load's rows are not in its ledger), with the job started again."""
    from lakehouse.inspect import top
    from tests.support.dashboards import panel_queries, queries_without_data

    def prometheus(path: str) -> Any:
        with urllib.request.urlopen(stack.url("PROMETHEUS_HOST_PORT", path), timeout=10) as r:
            return json.load(r)["data"]

    swarm = urllib.parse.urlencode({"user_count": 2, "spawn_rate": 2}).encode()
    urllib.request.urlopen(stack.url("LOCUST_HOST_PORT", "/swarm"), data=swarm, timeout=10)
    started = time.monotonic()
    try:
        missing = queries_without_data(
            top.prometheus_query(stack.url("PROMETHEUS_HOST_PORT", "")),
            panel_queries(),
            timeout_s=240,
        )
    finally:
        urllib.request.urlopen(stack.url("LOCUST_HOST_PORT", "/stop"), data=b"", timeout=10)
    assert missing == [], f"no data after {time.monotonic() - started:.0f} s: {missing}"
    print(f"every panel had data {time.monotonic() - started:.0f} s after the load started")
    targets = prometheus("/api/v1/targets")["activeTargets"]
    down = {t["scrapeUrl"]: t["lastError"] for t in targets if t["health"] != "up"}
    assert {t["labels"]["job"] for t in targets} >= {
        "lakehouse-job", "loadgen", "spark-driver", "spark-executors",
        "minio", "trino", "prometheus",
    }  # fmt: skip
    assert down == {}, down
    rules = prometheus("/api/v1/rules")["groups"]
    assert [r["name"] for g in rules for r in g["rules"] if r["health"] != "ok"] == []


def test_cdc_profile_captures_postgres_into_the_lake(stack: Stack, settings: Settings) -> None:
    """Profile `cdc`: transactions in its PostgreSQL reach the live views through the CDC
    service (Debezium) and the job-cdc service; the database is the oracle."""
    from lakehouse import cdc
    from lakehouse.cdc_workload import Workload

    part = dataclasses.replace(
        settings,
        env={
            **settings.env,
            "CDC_PG_HOST": "127.0.0.1",
            "CDC_PG_PORT": str(stack.ports["CDC_PG_HOST_PORT"]),
        },
    )
    with cdc.connect(part) as conn:
        workload = Workload(conn)
        for _ in range(150):
            workload.step()
    trino = Endpoints(region=settings["AWS_REGION"], trino=stack.url("TRINO_HOST_PORT", ""))
    database = settings["LAKEHOUSE_DATABASE"]
    report: list[str] = []
    deadline = time.monotonic() + 300
    while True:
        report.clear()
        try:
            cursor = trino_connection(trino, "hive", database, user="it").cursor()
            if cdc.verify(part, cursor, database, say=report.append):
                break
        except Exception as error:  # the views appear with the job's first commits
            report.append(repr(error))
        if time.monotonic() > deadline:
            logs = stack.compose("logs", "--tail=60", "cdc", "job-cdc").stdout
            pytest.fail("PostgreSQL and the lake differ:\n" + "\n".join(report) + logs[-5000:])
        time.sleep(5)


def test_down_with_volumes_leaves_nothing_of_the_project(stack: Stack) -> None:
    assert all(stack.resources().values()), "the stack should be there before down"
    down = stack.down()
    assert down.returncode == 0, down.stderr
    assert stack.resources() == {"containers": [], "networks": [], "volumes": []}
