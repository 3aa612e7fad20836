"""The load generator's figures for Prometheus (Locust has no exporter of its own), served
by the master (or the single process of a local run) with --metrics-port: events acked and
their rate, PutRecords calls and failures by name, the latency of a call, users and workers
(users per worker on a master). Read from Locust's own statistics at each scrape, so they
agree with its web UI and cost nothing between scrapes."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from prometheus_client import start_http_server
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector, CollectorRegistry

# The statistics row loadgen.user fires once per acknowledged event (beside PutRecords calls).
EVENTS_ACKED = "events acked"


class LoadCollector(Collector):
    def __init__(self, runner: Any) -> None:
        self.runner = runner

    def collect(self) -> Iterator[Metric]:
        entries = dict(self.runner.stats.entries)  # (name, method) -> StatsEntry
        acked = [e for (name, _), e in entries.items() if name == EVENTS_ACKED]
        yield CounterMetricFamily(
            "loadgen_events_acked",
            "events Kinesis acknowledged",
            value=sum(e.num_requests for e in acked),
        )
        yield GaugeMetricFamily(
            "loadgen_events_acked_per_second",
            "events acknowledged per second, Locust's current rate",
            value=sum(e.current_rps for e in acked),
        )
        calls = CounterMetricFamily("loadgen_requests", "calls by name", labels=["name"])
        failures = CounterMetricFamily(
            "loadgen_request_failures", "failed calls by name", labels=["name"]
        )
        p95 = GaugeMetricFamily(
            "loadgen_request_seconds_p95", "95th percentile of a call, whole run", labels=["name"]
        )
        for (name, _method), entry in sorted(entries.items()):
            if name == EVENTS_ACKED:
                continue
            calls.add_metric([name], entry.num_requests)
            failures.add_metric([name], entry.num_failures)
            if entry.num_requests:
                p95.add_metric([name], entry.get_response_time_percentile(0.95) / 1000)
        yield from (calls, failures, p95)
        yield GaugeMetricFamily("loadgen_users", "users running", value=self.runner.user_count)
        workers = getattr(self.runner, "clients", None)  # a master's
        yield GaugeMetricFamily(
            "loadgen_workers",
            "worker processes connected (1: a local run)",
            value=len(workers) if workers is not None else 1,
        )
        if workers is not None:
            per_worker = GaugeMetricFamily(
                "loadgen_worker_users", "users running on each worker", labels=["worker"]
            )
            for worker in workers.values():
                per_worker.add_metric([worker.id], worker.user_count)
            yield per_worker


def serve(runner: Any, port: int, host: str = "127.0.0.1") -> None:
    registry = CollectorRegistry()
    registry.register(LoadCollector(runner))
    start_http_server(port, addr=host, registry=registry)
