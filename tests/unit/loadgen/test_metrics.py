"""The load generator's Prometheus figures, from Locust's own statistics."""

from __future__ import annotations

import urllib.request
from types import SimpleNamespace
from typing import Any

import pytest
from prometheus_client.registry import CollectorRegistry

from loadgen.metrics import EVENTS_ACKED, LoadCollector, serve
from tests.support.ports import free_port

pytestmark = pytest.mark.unit


def entry(requests: int, failures: int = 0, rps: float = 0.0, p95_ms: float = 40.0) -> Any:
    """What the collector reads of a Locust StatsEntry (importing locust here would patch
    this process with gevent)."""
    return SimpleNamespace(
        num_requests=requests,
        num_failures=failures,
        current_rps=rps,
        get_response_time_percentile=lambda _p: p95_ms,
    )


def stats() -> Any:
    return SimpleNamespace(
        entries={
            (EVENTS_ACKED, "kinesis"): entry(120, rps=12.5),
            ("PutRecords", "kinesis"): entry(3, failures=1),
        }
    )


def sample(registry: CollectorRegistry, name: str, labels: dict[str, str] | None = None) -> float:
    value = registry.get_sample_value(name, labels or {})
    assert value is not None, name
    return value


def test_master_figures() -> None:
    workers = {
        "w1": SimpleNamespace(id="w1", user_count=2),
        "w2": SimpleNamespace(id="w2", user_count=1),
    }
    runner = SimpleNamespace(stats=stats(), user_count=3, clients=workers)
    registry = CollectorRegistry()
    registry.register(LoadCollector(runner))
    assert sample(registry, "loadgen_events_acked_total") == 120
    assert sample(registry, "loadgen_events_acked_per_second") == 12.5
    assert sample(registry, "loadgen_requests_total", {"name": "PutRecords"}) == 3
    assert sample(registry, "loadgen_request_failures_total", {"name": "PutRecords"}) == 1
    assert sample(registry, "loadgen_request_seconds_p95", {"name": "PutRecords"}) == 0.04
    assert sample(registry, "loadgen_users") == 3
    assert sample(registry, "loadgen_workers") == 2
    assert sample(registry, "loadgen_worker_users", {"worker": "w1"}) == 2
    assert registry.get_sample_value("loadgen_requests_total", {"name": EVENTS_ACKED}) is None


def test_a_local_run_is_one_worker_and_is_served_over_http() -> None:
    runner = SimpleNamespace(stats=stats(), user_count=1)
    port = free_port()
    serve(runner, port)
    text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()
    assert "loadgen_workers 1.0" in text
    assert "loadgen_events_acked_total 120.0" in text
