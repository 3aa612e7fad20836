"""The local stack's Prometheus, for tests: queries, alert states, and targets of a test's
own (a job's metrics port, a server the test starts), which Prometheus scrapes for as long
as their file exists (services/prometheus/prometheus.yml's file_sd_configs)."""

from __future__ import annotations

import json
import signal
import subprocess
import urllib.parse
import urllib.request
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from lakehouse.local.services import prometheus_config_dir
from tests.support.pipeline import Run


def order(n: int) -> bytes:
    """A valid order event, key o-`n`."""
    return json.dumps(
        {
            "event_type": "orders",
            "op": "c",
            "order_id": f"o-{n}",
            "customer_id": "c-1",
            "amount": 1.5,
            "status": "created",
            "order_ts": "2026-11-25T10:00:00.000Z",
            "items": [{"sku": "sku-1", "qty": 1, "price": "1.50"}],
        }
    ).encode()


def prometheus_url(run: Run) -> str:
    return f"http://127.0.0.1:{run.settings.port('PROMETHEUS_PORT')}"


def prometheus(run: Run, path: str, **params: str) -> Any:
    url = prometheus_url(run) + path
    if params:
        url += "?" + urllib.parse.urlencode(params)
    with urllib.request.urlopen(url, timeout=10) as response:
        body = json.load(response)
    assert body["status"] == "success", body
    return body["data"]


def value(run: Run, query: str) -> float | None:
    result = prometheus(run, "/api/v1/query", query=query)["result"]
    return float(result[0]["value"][1]) if result else None


def by_label(run: Run, query: str, label: str) -> dict[str, float]:
    """The query's values by one label."""
    result = prometheus(run, "/api/v1/query", query=query)["result"]
    return {r["metric"][label]: float(r["value"][1]) for r in result}


def labels(run: Run, query: str, label: str) -> set[str]:
    return set(by_label(run, query, label))


def alert_state(url: str, name: str, **labels: str) -> str | None:
    """The state (pending, firing) of the alert `name` whose labels include `labels`; None
    when it is not active."""
    with urllib.request.urlopen(f"{url}/api/v1/alerts", timeout=10) as response:
        alerts = json.load(response)["data"]["alerts"]
    return next(
        (
            a["state"]
            for a in alerts
            if a["labels"].get("alertname") == name
            and all(a["labels"].get(k) == v for k, v in labels.items())
        ),
        None,
    )


@contextmanager
def scrape_targets(run: Run, ports: Mapping[str, int]) -> Iterator[None]:
    """Prometheus scrapes 127.0.0.1:port as a target of each scrape job named (lakehouse-job,
    spark-driver, minio, ...) until the block ends."""
    targets = prometheus_config_dir(run.settings) / "targets"
    files = [targets / f"{job}-{port}.json" for job, port in ports.items()]
    for file, port in zip(files, ports.values(), strict=True):
        file.write_text(json.dumps([{"targets": [f"127.0.0.1:{port}"]}]))
    try:
        yield
    finally:
        for file in files:
            file.unlink()


@contextmanager
def scraped_job(run: Run, port: int, *args: str) -> Iterator[tuple[subprocess.Popen, str]]:
    """The job started with its metrics on `port`, which Prometheus scrapes; yields the
    process and its `instance` label. Stopped (SIGTERM) afterwards."""
    with scrape_targets(run, {"lakehouse-job": port}):
        job = run.start_job(*args, "--metrics-port", str(port))
        try:
            yield job, f"127.0.0.1:{port}"
        finally:
            job.send_signal(signal.SIGTERM)
            job.wait(180)
