"""`lakehouse top`: the pipeline on one terminal screen, refreshed every few seconds.

Everything comes from Prometheus (services/prometheus), so the screen shows what the
alerts see: the load generator's acknowledged events, events in per type and outcome,
how far the job is behind Kinesis, p95 freshness per sink, p95 seconds per stage of a
micro-batch, the age of the last batch, and the alerts firing; sparklines of the rates
and the lag over the last refreshes, and the last batches seen with each stage's seconds.
`snapshot` asks, `History` remembers, `render` draws (pure, unit-tested); `q` or Ctrl-C
quits.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import termios
import time
import tty
import urllib.parse
import urllib.request
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, TextIO

from prometheus_client.parser import text_string_to_metric_families

# An instant query -> its result vector (each item: metric labels and [time, "value"]).
Query = Callable[[str], list[dict[str, Any]]]

QUERIES: Mapping[str, str] = {
    "rates": "sum by (event_type, outcome) (rate(lakehouse_job_records_total[1m]))",
    "behind": "max(lakehouse_job_kinesis_millis_behind_latest) / 1000",
    "shards_behind": "sum(lakehouse_job_kinesis_shards_with_lag)",
    "freshness": "max by (sink) (lakehouse:freshness_seconds:p95_5m)",
    "stages": "lakehouse:stage_seconds:p95_5m",
    "last_batch_age": "time() - max(lakehouse_job_last_batch_timestamp_seconds)",
    "last_batch_at": "max(lakehouse_job_last_batch_timestamp_seconds)",
    "last_batch_records": "max(lakehouse_job_last_batch_records)",
    "last_batch_stages": "max by (stage) (lakehouse_job_last_batch_seconds)",
    "job_up": 'max(up{job="lakehouse-job"})',
    "load_acked": 'sum(rate(loadgen_events_acked_total{job="loadgen"}[1m]))',
    "load_failed": 'sum(rate(loadgen_request_failures_total{job="loadgen"}[1m]))',
    # Local mode's services (lakehouse.local.process_exporter): cores busy and resident memory.
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
    last_batch_at: float | None = None  # epoch seconds
    last_batch_records: float | None = None
    last_batch_stages: dict[str, float] = field(default_factory=dict)  # stage -> s
    job_up: bool = False
    load_acked: float | None = None  # events/s the load generator had acknowledged
    load_failed: float | None = None  # its failed calls/s
    alerts: list[str] = field(default_factory=list)
    service_cpu: dict[str, float] = field(default_factory=dict)  # service -> cores busy
    service_rss: dict[str, float] = field(default_factory=dict)  # service -> bytes
    # Set when Prometheus does not answer and the job's own endpoint was read instead.
    direct_from: str | None = None
    counts: dict[tuple[str, str], float] = field(default_factory=dict)  # its record totals


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
    view.last_batch_at = _number(query(QUERIES["last_batch_at"]))
    view.last_batch_records = _number(query(QUERIES["last_batch_records"]))
    view.last_batch_stages = _by(query(QUERIES["last_batch_stages"]), "stage")
    view.job_up = _number(query(QUERIES["job_up"])) == 1
    view.load_acked = _number(query(QUERIES["load_acked"]))
    view.load_failed = _number(query(QUERIES["load_failed"]))
    view.service_cpu = _by(query(QUERIES["service_cpu"]), "service")
    view.service_rss = _by(query(QUERIES["service_rss"]), "service")
    view.alerts = alerts()
    return view


SPARKS = "▁▂▃▄▅▆▇█"


def sparkline(values: list[float]) -> str:
    """One block per value, scaled to the largest (all low when every value is 0)."""
    top = max(values, default=0.0)
    if top <= 0:
        return SPARKS[0] * len(values)
    return "".join(SPARKS[min(7, int(v / top * 7.999))] for v in values)


@dataclass
class Batch:
    finished_at: float  # epoch seconds
    records: float
    stages: dict[str, float]  # stage -> seconds ("batch": the whole batch)


@dataclass
class History:
    """What the last `width` refreshes saw: the sparklines' points, and the last batches
    (those a refresh found; batches quicker than the refresh fall between)."""

    width: int = 30
    rates: dict[str, deque[float]] = field(default_factory=dict)  # type -> valid events/s
    behind: deque[float] = field(default_factory=deque)
    batches: deque[Batch] = field(default_factory=lambda: deque(maxlen=5))

    def __post_init__(self) -> None:
        self.behind = deque(self.behind, maxlen=self.width)

    def add(self, view: TopView) -> None:
        types = {t for t, _ in view.rates} | set(self.rates)
        for event_type in sorted(types):
            points = self.rates.setdefault(event_type, deque(maxlen=self.width))
            points.append(view.rates.get((event_type, "valid"), 0.0))
        self.behind.append(view.behind_s or 0.0)
        at, seen = view.last_batch_at, self.batches[-1].finished_at if self.batches else None
        if at is not None and view.last_batch_stages and at != seen:
            records = view.last_batch_records or 0.0
            self.batches.append(Batch(at, records, dict(view.last_batch_stages)))


def endpoint_snapshot(
    metrics_text: str, url: str, earlier: TopView | None, elapsed_s: float, now: float
) -> TopView:
    """The view from the job's own /metrics (`url`), for when Prometheus is down: counters
    and gauges as they are, events/s from the difference to the `earlier` view's counts
    `elapsed_s` ago; no percentiles (they need Prometheus's windows), no alerts."""
    view = TopView(job_up=True, direct_from=url)
    for family in text_string_to_metric_families(metrics_text):
        for sample in family.samples:
            name, labels, value = sample.name, sample.labels, float(sample.value)
            if name == "lakehouse_job_records_total":
                view.counts[(labels["event_type"], labels["outcome"])] = value
            elif name == "lakehouse_job_kinesis_millis_behind_latest":
                view.behind_s = value / 1000
            elif name == "lakehouse_job_kinesis_shards_with_lag":
                view.shards_behind = value
            elif name == "lakehouse_job_last_batch_timestamp_seconds" and value > 0:
                view.last_batch_at, view.last_batch_age_s = value, now - value
            elif name == "lakehouse_job_last_batch_records":
                view.last_batch_records = value
            elif name == "lakehouse_job_last_batch_seconds":
                view.last_batch_stages[labels["stage"]] = value
    if earlier is not None and earlier.direct_from and elapsed_s > 0:
        view.rates = {
            key: max(0.0, count - earlier.counts.get(key, count)) / elapsed_s
            for key, count in view.counts.items()
        }
    return view


# The stages of a batch that are not a sink's write (lakehouse_job.metrics).
BATCH_STAGES: Mapping[str, str] = {"read_parse": "read and parse", "batch": "whole batch"}


def _seconds(value: float | None) -> str:
    return "-" if value is None else f"{value:,.1f} s"


def render(view: TopView, now: str = "", history: History | None = None) -> str:
    history = history or History()
    lines = [f"lakehouse top  {now}".rstrip(), ""]
    if view.direct_from:
        lines[1:1] = [
            f"Prometheus does not answer: read from the job at {view.direct_from} (no "
            "percentiles, no alerts; `lakehouse status`)",
            "",
        ]
    lines += _pipeline_lines(view, history)
    lines += _rate_lines(view, history)
    lines += _latency_lines(view, history)
    lines += _service_lines(view)
    if view.direct_from:
        return "\n".join(lines)
    lines += ["", "alerts firing: " + ("none" if not view.alerts else str(len(view.alerts)))]
    lines += [f"  {alert}" for alert in view.alerts]
    return "\n".join(lines)


def _pipeline_lines(view: TopView, history: History) -> list[str]:
    """The load, the job, and how far behind the stream it is."""
    lines = []
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
    if history.behind:
        lines.append(f"         behind  {sparkline(list(history.behind))}")
    return lines


def _rate_lines(view: TopView, history: History) -> list[str]:
    """Valid and quarantined events a second, per event type."""
    lines = [
        "",
        f"{'events/s (1 min)':<24}{'valid':>10}{'quarantined':>13}  valid, last refreshes",
    ]
    types = sorted({t for t, _ in view.rates})
    for event_type in types:
        valid = view.rates.get((event_type, "valid"), 0.0)
        bad = view.rates.get((event_type, "quarantined"), 0.0)
        spark = sparkline(list(history.rates.get(event_type, [])))
        lines.append(f"  {event_type:<22}{valid:>10,.1f}{bad:>13,.1f}  {spark}".rstrip())
    if not types:
        lines.append("  (no records in the last minute)")
    return lines


def _latency_lines(view: TopView, history: History) -> list[str]:
    """Freshness and write times per sink, the batch's stages, the last batches."""
    lines = ["", f"{'p95 over 5 min':<24}{'freshness':>10}{'write':>13}"]
    for sink in sorted(set(view.freshness_p95) | set(view.stage_p95) - set(BATCH_STAGES)):
        lines.append(
            f"  {sink:<22}{_seconds(view.freshness_p95.get(sink)):>10}"
            f"{_seconds(view.stage_p95.get(sink)):>13}"
        )
    for stage, label in BATCH_STAGES.items():
        lines.append(f"  {label:<22}{'':>10}{_seconds(view.stage_p95.get(stage)):>13}")
    if history.batches:
        lines += ["", "last batches (records, seconds: whole batch, then each stage)"]
        for batch in reversed(history.batches):
            sinks = ", ".join(
                f"{stage} {seconds:,.1f}"
                for stage, seconds in sorted(batch.stages.items())
                if stage != "batch"
            )
            lines.append(
                f"  {time.strftime('%X', time.localtime(batch.finished_at))}"
                f"{batch.records:>10,.0f}{_seconds(batch.stages.get('batch')):>10}  {sinks}"
            )
    return lines


def _service_lines(view: TopView) -> list[str]:
    """Each service's CPU and memory (local mode's process exporter)."""
    if not view.service_rss:
        return []
    lines = ["", f"{'services':<24}{'CPU':>10}{'memory':>13}"]
    for name in sorted(view.service_rss):
        cpu = view.service_cpu.get(name)
        lines.append(
            f"  {name:<22}{'-' if cpu is None else f'{cpu:.0%}':>10}"
            f"{view.service_rss[name] / 2**20:>9,.0f} MiB"
        )
    total = sum(view.service_rss.values()) / 2**30
    lines.append(f"  {'all':<22}{sum(view.service_cpu.values()):>10.0%}{total:>9,.1f} GiB")
    return lines


@contextlib.contextmanager
def keypresses(stream: TextIO | None) -> Iterator[Callable[[float], str]]:
    """A function that waits up to its timeout for a key and returns it ("" for none): one
    key at a time, unechoed, from a terminal (its settings restored afterwards); from
    anything else (None, a pipe), only the wait."""
    try:
        fd = stream.fileno() if stream is not None else -1
        is_terminal = fd >= 0 and os.isatty(fd)
    except (OSError, ValueError):  # a StringIO, a closed stream
        is_terminal = False
    if not is_terminal:

        def just_wait(timeout_s: float) -> str:
            time.sleep(timeout_s)
            return ""

        yield just_wait
        return
    saved = termios.tcgetattr(fd)
    tty.setcbreak(fd, termios.TCSANOW)  # keys typed before now are kept

    def wait(timeout_s: float) -> str:
        ready, _, _ = select.select([fd], [], [], timeout_s)
        return os.read(fd, 1).decode(errors="replace") if ready else ""

    try:
        yield wait
    finally:
        termios.tcsetattr(fd, termios.TCSADRAIN, saved)


def run_top(
    base_url: str,
    out: TextIO,
    every_s: float = 2.0,
    once: bool = False,
    keys: TextIO | None = None,
    job_url: str | None = None,
) -> int:
    """Draw every `every_s` until `q` (read from `keys`, a terminal) or Ctrl-C (the
    caller's KeyboardInterrupt; the terminal is restored first). While Prometheus does not
    answer, the job's own metrics (`job_url`) are shown instead. `once`: print one screen,
    exit 1 if Prometheus does not answer."""
    query = prometheus_query(base_url)
    history = History()
    earlier: TopView | None = None  # the last view read from the job itself
    earlier_at = 0.0
    with keypresses(keys) as pressed:
        while True:
            try:
                view: TopView | None = snapshot(query, lambda: firing_alerts(base_url))
                ok = True
            except OSError as error:
                ok, view = False, None
                now = time.time()
                if job_url is not None:
                    with contextlib.suppress(OSError):
                        with urllib.request.urlopen(job_url, timeout=5) as response:
                            metrics = response.read().decode()
                        view = endpoint_snapshot(metrics, job_url, earlier, now - earlier_at, now)
                        earlier, earlier_at = view, now
                text = (
                    f"Prometheus at {base_url} does not answer ({error})"
                    + (f", nor the job at {job_url}" if job_url else "")
                    + ": is the stack up? `lakehouse status`"
                )
            if view is not None:
                history.add(view)
                text = render(view, time.strftime("%X"), history)
            if once:
                out.write(text + "\n")
                return 0 if ok else 1
            out.write("\x1b[H\x1b[2J" + text + "\n\n(q or Ctrl-C to quit)\n")
            out.flush()
            if pressed(every_s).lower() == "q":
                return 0
