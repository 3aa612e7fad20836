"""Process metrics of the local stack's services, for Prometheus (local mode's `processes`
service; in Compose each service is a container, which the engine accounts for).

At each scrape, for every service `lakehouse status` lists (the supervisor's PID files: the
stack, the CDC part when on, the job when it runs under `lakehouse run --background`): whether
it runs, and the CPU seconds and resident memory of its process group, read from /proc (each
service is started in a group of its own, so a JVM's or a shell's children count too).
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from collections.abc import Iterator, Sequence

from prometheus_client import start_http_server
from prometheus_client.core import REGISTRY, CounterMetricFamily, GaugeMetricFamily
from prometheus_client.registry import Collector

from lakehouse.core import procstats
from lakehouse.core.config import Settings, load_settings
from lakehouse.local import stack


class ServiceCollector(Collector):
    def __init__(self, settings: Settings) -> None:
        self.settings = settings

    def collect(self) -> Iterator[GaugeMetricFamily | CounterMetricFamily]:
        up = GaugeMetricFamily(
            "lakehouse_service_up", "1 while the service's process runs", labels=["service"]
        )
        cpu = CounterMetricFamily(
            "lakehouse_service_cpu_seconds",
            "CPU seconds (user and system) of the service's process group",
            labels=["service"],
        )
        rss = GaugeMetricFamily(
            "lakehouse_service_resident_bytes",
            "resident memory of the service's process group",
            labels=["service"],
        )
        rows = stack.statuses(self.settings)
        groups = procstats.groups([row.pid for row in rows if row.pid and row.state == "running"])
        for row in rows:
            running = row.state == "running" and row.pid in groups
            up.add_metric([row.name], 1.0 if running else 0.0)
            if running and row.pid:
                sample = groups[row.pid]
                cpu.add_metric([row.name], sample.cpu_s)
                rss.add_metric([row.name], sample.rss_mib * 2**20)
        yield from (up, cpu, rss)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="lakehouse-process-exporter", description=__doc__)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--host", default="127.0.0.1")
    args = parser.parse_args(argv)
    REGISTRY.register(ServiceCollector(load_settings()))
    start_http_server(args.port, addr=args.host)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    try:
        while not stop.wait(1):
            pass
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
