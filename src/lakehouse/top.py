"""`lakehouse top`: the pipeline on one terminal screen, refreshed every few seconds.

Everything comes from Prometheus (services/prometheus), so the screen shows what the
alerts see: the load generator's acknowledged events, events in per type and outcome,
how far the job is behind Kinesis, p95 freshness per sink, p95 seconds per stage of a
micro-batch, the age of the last batch, and the alerts firing. `snapshot` asks, `render`
draws (pure, unit-tested).
"""

from __future__ import annotations

import json
import time
import urllib.parse
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TextIO

# An instant query -> its result vector (each item: metric labels and [time, "value"]).
Query = Callable[[str], list[dict[str, Any]]]

QUERIES: Mapping[str, str] = {
    "rates": "sum by (event_type, outcome) (rate(lakehouse_job_records_total[1m]))",
    "behind": "max(lakehouse_job_kinesis_millis_behind_latest) / 1000",
    "shards_behind": "sum(lakehouse_job_kinesis_shards_with_lag)",
    "freshness": "max by (sink) (lakehouse:freshness_seconds:p95_5m)",
    "stages": "lakehouse:stage_seconds:p95_5m",
    "last_batch_age": "time() - max(lakehouse_job_last_batch_timestamp_seconds)",
    "job_up": 'max(up{job="lakehouse-job"})',
    "load_acked": 'sum(rate(loadgen_events_acked_total{job="loadgen"}[1m]))',
    "load_failed": 'sum(rate(loadgen_request_failures_total{job="loadgen"}[1m]))',
    # Local mode's services (lakehouse.process_exporter): cores busy and resident memory.
    "service_cpu": "sum by (service) (rate(lakehouse_service_cpu_seconds_total[1m]))",
    "service_rss": "sum by (service) (lakehouse_service_resident_bytes)",
}


@dataclass
class TopView:
    rates: dict[tuple[str, str], float] = field(default_factory=dict)  # (type, outcome)
    behind_s: float | None = None
    shards_behind: float | None = None
    freshness_p95: dict[str, float] = field(default_factory=dict)  # sink -> s
    stage_p95: dict[str, float] = field(default_factory=dict)  # stage -> s
    last_batch_age_s: float | None = None
    job_up: bool = False
    load_acked: float | None = None  # events/s the load generator had acknowledged
    load_failed: float | None = None  # its failed calls/s
    alerts: list[str] = field(default_factory=list)
    service_cpu: dict[str, float] = field(default_factory=dict)  # service -> cores busy
    service_rss: dict[str, float] = field(default_factory=dict)  # service -> bytes


def prometheus_query(base_url: str, timeout_s: float = 5) -> Query:
    def query(expr: str) -> list[dict[str, Any]]:
        url = f"{base_url}/api/v1/query?" + urllib.parse.urlencode({"query": expr})
        with urllib.request.urlopen(url, timeout=timeout_s) as response:
            return list(json.load(response)["data"]["result"])

    return query


def firing_alerts(base_url: str, timeout_s: float = 5) -> list[str]:
    with urllib.request.urlopen(f"{base_url}/api/v1/alerts", timeout=timeout_s) as response:
        alerts = json.load(response)["data"]["alerts"]
    return sorted(
        f"{a['labels']['alertname']}: {a.get('annotations', {}).get('summary', '')}".rstrip(": ")
        for a in alerts
        if a.get("state") == "firing"
    )


def _number(result: list[dict[str, Any]]) -> float | None:
    return float(result[0]["value"][1]) if result else None


def _by(result: list[dict[str, Any]], label: str) -> dict[str, float]:
    found = {}
    for item in result:
        value = float(item["value"][1])
        if value == value:  # NaN: a quantile of no observations
            found[item["metric"].get(label, "")] = value
    return found


def snapshot(query: Query, alerts: Callable[[], list[str]] = list) -> TopView:
    view = TopView()
    for item in query(QUERIES["rates"]):
        labels = item["metric"]
        view.rates[(labels.get("event_type", ""), labels.get("outcome", ""))] = float(
            item["value"][1]
        )
    view.behind_s = _number(query(QUERIES["behind"]))
    view.shards_behind = _number(query(QUERIES["shards_behind"]))
    view.freshness_p95 = _by(query(QUERIES["freshness"]), "sink")
    view.stage_p95 = _by(query(QUERIES["stages"]), "stage")
    view.last_batch_age_s = _number(query(QUERIES["last_batch_age"]))
    view.job_up = _number(query(QUERIES["job_up"])) == 1
    view.load_acked = _number(query(QUERIES["load_acked"]))
    view.load_failed = _number(query(QUERIES["load_failed"]))
    view.service_cpu = _by(query(QUERIES["service_cpu"]), "service")
    view.service_rss = _by(query(QUERIES["service_rss"]), "service")
    view.alerts = alerts()
    return view


def _seconds(value: float | None) -> str:
    return "-" if value is None else f"{value:,.1f} s"


def render(view: TopView, now: str = "") -> str:
    lines = [f"lakehouse top  {now}".rstrip(), ""]
    if view.load_acked is None:
        lines.append("load     not running (`lakehouse load`)")
    else:
        lines.append(
            f"load     {view.load_acked:,.1f} events/s acknowledged by Kinesis, "
            f"{view.load_failed or 0:,.1f} failed calls/s"
        )
    lines.append(f"job      {'up' if view.job_up else 'DOWN (no metrics answer)'}")
    lines.append(
        f"kinesis  {_seconds(view.behind_s)} behind the newest record, "
        f"{view.shards_behind or 0:.0f} shards behind; last batch "
        f"{_seconds(view.last_batch_age_s)} ago"
    )
    lines += ["", f"{'events/s (1 min)':<24}{'valid':>10}{'quarantined':>13}"]
    types = sorted({t for t, _ in view.rates})
    for event_type in types:
        valid = view.rates.get((event_type, "valid"), 0.0)
        bad = view.rates.get((event_type, "quarantined"), 0.0)
        lines.append(f"  {event_type:<22}{valid:>10,.1f}{bad:>13,.1f}")
    if not types:
        lines.append("  (no records in the last minute)")
    lines += ["", f"{'p95 over 5 min':<24}{'freshness':>10}{'write':>13}"]
    for sink in sorted(set(view.freshness_p95) | set(view.stage_p95) - {"batch"}):
        lines.append(
            f"  {sink:<22}{_seconds(view.freshness_p95.get(sink)):>10}"
            f"{_seconds(view.stage_p95.get(sink)):>13}"
        )
    lines.append(f"  {'whole batch':<22}{'':>10}{_seconds(view.stage_p95.get('batch')):>13}")
    if view.service_rss:
        lines += ["", f"{'services':<24}{'CPU':>10}{'memory':>13}"]
        for name in sorted(view.service_rss):
            cpu = view.service_cpu.get(name)
            lines.append(
                f"  {name:<22}{'-' if cpu is None else f'{cpu:.0%}':>10}"
                f"{view.service_rss[name] / 2**20:>9,.0f} MiB"
            )
        total = sum(view.service_rss.values()) / 2**30
        lines.append(f"  {'all':<22}{sum(view.service_cpu.values()):>10.0%}{total:>9,.1f} GiB")
    lines += ["", "alerts firing: " + ("none" if not view.alerts else str(len(view.alerts)))]
    lines += [f"  {alert}" for alert in view.alerts]
    return "\n".join(lines)


def run_top(base_url: str, out: TextIO, every_s: float = 2.0, once: bool = False) -> int:
    """Draw every `every_s` until interrupted; `once`: print one screen, exit 1 if
    Prometheus does not answer."""
    query = prometheus_query(base_url)
    while True:
        try:
            text = render(snapshot(query, lambda: firing_alerts(base_url)), time.strftime("%X"))
            ok = True
        except OSError as error:
            ok = False
            text = (
                f"Prometheus at {base_url} does not answer ({error}): is the stack up? "
                "`lakehouse status`"
            )
        if once:
            out.write(text + "\n")
            return 0 if ok else 1
        out.write("\x1b[H\x1b[2J" + text + "\n\n(Ctrl-C to quit)\n")
        out.flush()
        time.sleep(every_s)
