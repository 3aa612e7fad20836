"""The streaming job under a fixed input rate: throughput, freshness, cost per event.

For each profile and rate: a fresh stream, the job started on it and warmed up at the
rate, then a producer thread sends orders at the rate for `seconds`. Freshness is each
record's write in each sink minus its Kinesis arrival, from the job's per-batch record
(bench.freshness), so nothing else runs beside the job but the producer and the stack;
after the run, the same figure is read back from the tables for every writer, Hudi's own
sink too (bench.table_freshness).
With `probe`, threads also poll what readers see: Trino for the CoW table and the MoR
read-optimized view, hudi-rs for the MoR snapshot (Trino cannot read it), the time from
sending an event to the first poll that sees it. Every profile gets the same events (same
keys, values and order; only the clock differs).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import statistics
import subprocess
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import yaml

from lakehouse.bench import freshness, leftovers, table_freshness
from lakehouse.core import procstats
from lakehouse.core.bootstrap import delete_stream, ensure_stream
from lakehouse.core.clients import hudi_rs_table, kinesis_client, s3_client, trino_connection
from lakehouse.core.config import Settings
from lakehouse.local.job_launcher import job_command, job_env
from lakehouse_tables.declarations import TABLES_YAML

# Command-line patterns of the Kinesis engines' processes.
KINESIS_ENGINES = {"kinesalite": "kinesalite", "kinesis-mock": "kinesis-local"}
# Other processes whose CPU the benchmark reports, so a limit elsewhere is visible.
COMPONENTS = {
    **KINESIS_ENGINES,
    "minio": "bin/minio",
    "metastore": "HiveMetaStore",
    "trino": "io.trino.server",
}


@dataclass(frozen=True)
class PipelineOptions:
    rate: int
    seconds: float
    keys: int
    shards: int
    trigger_s: float
    drain_s: float
    profile: str
    workdir: Path
    warmup_s: float = 60.0
    probe: bool = False  # poll the tables through Trino and hudi-rs as well (costs CPU)
    rt_probe: bool = True
    job_args: tuple[str, ...] = ()  # extra job options, e.g. ("--parallel-writes", "3")
    run: int = 0  # of repeats (1, 2, ...): a results folder each
    variants: Variants = ()
    keep_tables: bool = False  # True: leave the run's tables in the bucket and metastore


def iso(ts: float) -> str:
    dt = datetime.fromtimestamp(ts, UTC)
    return dt.strftime("%Y-%m-%dT%H:%M:%S.") + f"{dt.microsecond // 1000:03d}Z"


def order_event(n: int, keys: int, order_ts: str) -> dict[str, Any]:
    """The benchmark's n-th order event (from 1): the first `keys` create order ids, every
    later one updates one of them, cycling."""
    return {
        "event_type": "orders",
        "op": "c" if n <= keys else "u",
        "order_id": f"o{n % keys:09d}",
        "customer_id": f"cust-{n % 5000:05d}",
        "amount": float(n % 1000),
        "status": "placed" if n <= keys else "paid",
        "order_ts": order_ts,
    }


class Producer(threading.Thread):
    """PutRecords at a fixed rate; keys cycle through `keys` order ids, so the table grows
    to `keys` rows and then every event is an update. The payloads are encoded before the
    clock starts and only the send time is filled in (the event time the polling probes
    compare with), so the producer's own CPU stays small next to the job's."""

    def __init__(
        self, client: Any, stream: str, rate: int, seconds: float, keys: int, first: int = 0
    ) -> None:
        super().__init__(daemon=True)
        self.client, self.stream, self.rate = client, stream, rate
        self.seconds, self.keys = seconds, keys
        self.first = first  # events numbered before this one were sent by an earlier producer
        self.sent = 0
        self.markers: list[float] = []  # one send time a second, for the polling probes
        self.error: Exception | None = None
        self.payloads = [
            _payload_parts(n, keys) for n in range(first + 1, first + 1 + int(rate * seconds))
        ]

    def run(self) -> None:
        try:
            self._send()
        except Exception as exc:  # reported in the result, not swallowed
            self.error = exc

    def _send(self) -> None:
        start = time.time()
        batch = max(1, min(500, self.rate // 10))
        while self.sent < len(self.payloads):
            due = min(len(self.payloads), int((time.time() - start) * self.rate))
            # Whole calls of `batch` records (a tenth of a second's worth): a call costs
            # the producer ~2 ms of CPU whatever it holds, and calls of the few records due
            # every few milliseconds took it most of a core.
            if due - self.sent < min(batch, len(self.payloads) - self.sent):
                time.sleep(0.005)
                continue
            sent_at = time.time()
            stamp = iso(sent_at).encode()
            records = [
                {"Data": head + stamp + tail, "PartitionKey": key}
                for key, head, tail in self.payloads[self.sent : min(due, self.sent + batch)]
            ]
            response = self.client.put_records(StreamName=self.stream, Records=records)
            if response["FailedRecordCount"]:
                raise RuntimeError(
                    f"{response['FailedRecordCount']} of {len(records)} records were refused "
                    "by the Kinesis engine: the benchmark needs every event in the stream"
                )
            self.sent += len(records)
            if not self.markers or sent_at - self.markers[-1] >= 1:
                self.markers.append(sent_at)


TIME_SLOT = "\x00order_ts\x00"


def _payload_parts(n: int, keys: int) -> tuple[str, bytes, bytes]:
    """Event n's partition key and its JSON around the order_ts value."""
    head, tail = (
        json.dumps(order_event(n, keys, TIME_SLOT))
        .encode()
        .split(json.dumps(TIME_SLOT)[1:-1].encode())
    )
    return str(n), head, tail


class Probe(threading.Thread):
    """Polls `newest()` (the newest event time a reader sees) every `interval_s`."""

    def __init__(self, newest: Callable[[], float | None], interval_s: float) -> None:
        super().__init__(daemon=True)
        self.newest, self.interval_s = newest, interval_s
        self.samples: list[tuple[float, float]] = []  # (poll end time, newest event time)
        self.stop = threading.Event()

    def run(self) -> None:
        while not self.stop.is_set():
            try:
                newest = self.newest()
                if newest is not None:
                    self.samples.append((time.time(), newest))
            except Exception:  # the table does not exist before its first commit
                pass
            self.stop.wait(self.interval_s)

    def latencies(self, markers: list[float]) -> list[tuple[float, float]]:
        """(marker, seconds until first seen) for each marker that was seen."""
        found = []
        for marker in markers:
            seen = next((t for t, newest in self.samples if newest >= marker - 0.001), None)
            if seen is not None:
                found.append((marker, seen - marker))
        return found


def trino_newest(settings: Settings, database: str, table: str) -> Callable[[], float | None]:
    cursor = trino_connection(settings.endpoints, "hudi", database).cursor()

    def newest() -> float | None:
        cursor.execute(f"SELECT max(order_ts) FROM {table}")
        value = cursor.fetchall()[0][0]
        return None if value is None else value.replace(tzinfo=UTC).timestamp()

    return newest


def hudi_rs_newest(settings: Settings, base_uri: str) -> Callable[[], float | None]:
    """Newest event time in a MoR snapshot (base + log files merged), read by hudi-rs."""
    import pyarrow.compute as pc

    def newest() -> float | None:
        table = hudi_rs_table(settings.endpoints, base_uri)
        values = [pc.max(batch.column("order_ts")).as_py() for batch in table.read()]
        values = [v for v in values if v is not None]
        return max(values).replace(tzinfo=UTC).timestamp() if values else None

    return newest


def pct(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))], 2)


# Benchmark profiles: the job's own profiles (its --profile choices, table layouts), and
# ways of running the job on the fast layout: Hudi's streaming sink as the yardstick (the
# Hudi tables only, or every output the job writes: lakehouse_job.bench.hudi_streaming_sink),
# and without its Prometheus metrics (what serving them costs).
LAYOUT_PROFILES = ("fast", "baseline")
SINK_WRITERS = {"hudi-sink": "hudi-streaming-sink", "hudi-sink-all": "hudi-streaming-sink-all"}
BENCH_PROFILES = (*LAYOUT_PROFILES, *SINK_WRITERS, "fast-nometrics")
# The driver that takes --writer (the yardsticks): the job's own options, and that one.
YARDSTICK_MODULE = "lakehouse_job.bench.job"
JOB_MODULE = "lakehouse_job.job"


Variants = tuple[tuple[str, tuple[str, ...]], ...]  # (name, job options) of the user's profiles


def parse_variant(text: str) -> tuple[str, tuple[str, ...]]:
    """`NAME=JOB OPTIONS` (--variant): a profile of the user's, the fast profile with
    those job options, to compare with the others in one interleaved run. Leading
    `SETTING=VALUE` words replace a setting of versions.env or services/*.env for that
    profile's job (e.g. `hudi102=HUDI_VERSION=1.0.2 --hudi-option ...`)."""
    name, sep, options = text.partition("=")
    if not sep or not re.fullmatch(r"[a-z0-9][a-z0-9-]*", name) or name in BENCH_PROFILES:
        raise ValueError(
            f"--variant {text!r}: write NAME=JOB OPTIONS with a new lower-case NAME (not one "
            f"of {', '.join(BENCH_PROFILES)}), e.g. 'noreadahead=--kinesis-option "
            "readAhead=false'"
        )
    return name, tuple(shlex.split(options))


SETTING_WORD = re.compile(r"[A-Z][A-Z0-9_]*=")


def _split_variant(words: tuple[str, ...]) -> tuple[dict[str, str], list[str]]:
    """A variant's leading SETTING=VALUE words, and its job options after them."""
    settings: dict[str, str] = {}
    for at, word in enumerate(words):
        if not SETTING_WORD.match(word):
            return settings, list(words[at:])
        key, _, value = word.partition("=")
        settings[key] = value
    return settings, []


def profile_settings(settings: Settings, profile: str, variants: Variants = ()) -> Settings:
    """The settings a profile's job is started with: a variant's SETTING=VALUE words over
    the stack's (a ConfigError names one that is not a setting)."""
    overrides, _ = _split_variant(dict(variants).get(profile, ()))
    return settings.overridden(overrides) if overrides else settings


def job_profile_args(profile: str, variants: Variants = ()) -> list[str]:
    found = dict(variants)
    if profile in found:
        return ["--profile", "fast", *_split_variant(found[profile])[1]]
    if profile in SINK_WRITERS:
        return ["--profile", "fast", "--writer", SINK_WRITERS[profile]]
    if profile == "fast-nometrics":
        return ["--profile", "fast", "--metrics-port", "0", "--no-hudi-metrics"]
    if profile not in BENCH_PROFILES:
        raise ValueError(f"unknown benchmark profile {profile!r}: one of {BENCH_PROFILES}")
    return ["--profile", profile]


def job_module(job_args: Sequence[str]) -> str:
    """The module that runs a job with these options: the job's own, or the benchmark's
    entry when they pick a writer (the yardstick profiles, or a variant's --writer)."""
    picks_writer = any(a == "--writer" or a.startswith("--writer=") for a in job_args)
    return YARDSTICK_MODULE if picks_writer else JOB_MODULE


def orders_only(path: Path) -> Path:
    """The project's table declarations reduced to the one the benchmark sends, so every
    profile writes the same tables (Hudi's streaming sink runs a query per table)."""
    declared = yaml.safe_load(TABLES_YAML.read_text())
    declared["event_types"] = {"orders": declared["event_types"]["orders"]}
    path.write_text(yaml.safe_dump(declared, sort_keys=False))
    return path


def run_pipeline(settings: Settings, opts: PipelineOptions, say: Callable[[str], None]) -> dict:
    tag = uuid.uuid4().hex[:6]
    stream, database = f"bench-{tag}", f"bench_{tag}"
    bucket = settings["LAKEHOUSE_BUCKET"]
    warehouse = f"s3a://{bucket}/bench/{tag}/warehouse"
    kinesis = kinesis_client(settings.endpoints)
    ensure_stream(kinesis, stream, shards=opts.shards)
    workdir = opts.workdir / f"{opts.profile}-{opts.rate}{f'-{opts.run}' if opts.run else ''}"
    workdir.mkdir(parents=True, exist_ok=True)
    metrics = workdir / "batches.jsonl"
    tables = orders_only(workdir / "tables.yaml")
    args = [
        *("--stream", stream, "--database", database, "--warehouse", warehouse),
        *("--raw", f"s3a://{bucket}/bench/{tag}/raw"),
        *("--checkpoint", f"s3a://{bucket}/bench/{tag}/checkpoint"),
        *("--metastore-uri", settings.hms_uri, "--kinesis-endpoint", settings.kinesis_endpoint),
        *("--trigger-seconds", str(opts.trigger_s), "--metrics-file", str(metrics)),
        *("--tables", str(tables)),
        *job_profile_args(opts.profile, opts.variants),
        *opts.job_args,
    ]
    with open(workdir / "job.log", "wb") as log:
        job = subprocess.Popen(
            job_command(args, module=job_module(args)),
            env=job_env(profile_settings(settings, opts.profile, opts.variants)),
            stdout=log,
            stderr=log,
            start_new_session=True,
        )
    try:
        result = _measure(settings, opts, kinesis, stream, database, warehouse, job, metrics, say)
    finally:
        if job.poll() is None:
            os.killpg(job.pid, signal.SIGTERM)
            try:
                job.wait(120)
            except subprocess.TimeoutExpired:
                os.killpg(job.pid, signal.SIGKILL)
        delete_stream(kinesis, stream)
    # Removed once measured (the freshness is read back from the tables in _measure); a
    # failed run's tables are left for a look.
    if not opts.keep_tables:
        leftovers.remove_run(settings, f"bench/{tag}/", (database,), say)
    return {**result, "database": database}


def _measure(
    settings: Settings,
    opts: PipelineOptions,
    kinesis: Any,
    stream: str,
    database: str,
    warehouse: str,
    job: subprocess.Popen,
    metrics: Path,
    say: Callable[[str], None],
) -> dict:
    warmed_up = _warm_up(opts, kinesis, stream, job, metrics)
    producer = Producer(kinesis, stream, opts.rate, opts.seconds, opts.keys, first=warmed_up)
    probes = _probes(settings, opts, database, warehouse)
    before = _cpu_snapshot(job)
    rss_peak = 0.0
    started = time.time()
    producer.start()
    for probe in probes.values():
        probe.start()
    while producer.is_alive():
        rss_peak = max(rss_peak, procstats.group(job.pid).rss_mib)
        producer.join(1.0)
    sent_window = time.time() - started
    processed_in_window = _processed(_metric_lines(metrics), started, started + sent_window)
    job_cpu, cpu_during_send = _cpu_spent(before, _cpu_snapshot(job), bool(probes))
    say(f"    sent {producer.sent:,} in {sent_window:.0f}s; draining up to {opts.drain_s:.0f}s")
    rss_peak = _wait_drained(opts, producer.sent, job, metrics, started, rss_peak)
    for probe in probes.values():
        probe.stop.set()
    if producer.error:
        raise producer.error
    tables = tables_freshness(settings, warehouse, started, started + sent_window)
    lines = [b for b in _metric_lines(metrics) if b["finished_at"] >= started]
    batches = [b for b in lines if b["records"]]
    polled = _polled(probes, producer, started)
    return {
        "profile": opts.profile,
        "rate": opts.rate,
        "run": opts.run,
        "input_per_s": round(producer.sent / sent_window, 1),
        "processed_per_s": round(processed_in_window / sent_window, 1),
        "backlog_end": producer.sent - processed_in_window,
        "drained": _processed(lines, started, time.time()) >= producer.sent,
        "batches": len(batches),
        "batch_records_mean": round(statistics.mean(b["records"] for b in batches), 0)
        if batches
        else 0,
        # Per sink, every record that arrived while sending: its write's end minus its
        # arrival (the job's metrics file); the yardstick writes no such record.
        "freshness": freshness.by_sink(lines, started, started + sent_window),
        # Per table, read back after the run: each row's commit completion minus its
        # arrival, the measure Hudi's sink has too (bench.table_freshness).
        "freshness_tables": tables,
        **({"freshness_polled": polled} if probes else {}),
        "sink_seconds": _sink_seconds(lines),
        "job_cpu_s_per_1k_events": round(1000 * job_cpu / max(1, processed_in_window), 3),
        "job_rss_mib": round(rss_peak, 0),
        "cpu_s_during_send": cpu_during_send,
        "send_seconds": round(sent_window, 1),
        "workdir": str(metrics.parent),
    }


def _cpu_snapshot(job: subprocess.Popen) -> tuple[Any, dict[str, Any], Any]:
    """The CPU so far of the job's process group, the stack's components, this process."""
    return procstats.group(job.pid), procstats.by_command(COMPONENTS), procstats.self_sample()


def _cpu_spent(
    before: tuple[Any, dict[str, Any], Any], after: tuple[Any, dict[str, Any], Any], probes: bool
) -> tuple[float, dict[str, float]]:
    """The job's CPU-seconds between two snapshots, and everyone's by name."""
    (job_before, others_before, self_before), (job_after, others_after, self_after) = (
        before,
        after,
    )
    job_cpu = job_after.cpu_s - job_before.cpu_s
    bench_cpu = "bench (producer + probes)" if probes else "bench (producer)"
    return job_cpu, {
        "job": round(job_cpu, 1),
        bench_cpu: round(self_after.cpu_s - self_before.cpu_s, 1),
        **{
            name: round(others_after[name].cpu_s - others_before[name].cpu_s, 1)
            for name in COMPONENTS
            if others_after[name].cpu_s
        },
    }


def _wait_drained(
    opts: PipelineOptions,
    sent: int,
    job: subprocess.Popen,
    metrics: Path,
    started: float,
    rss_peak: float,
) -> float:
    """Wait up to --drain until the job has every record sent; the peak RSS meanwhile."""
    drain_until = time.time() + opts.drain_s
    while (
        time.time() < drain_until
        and _processed(_metric_lines(metrics), started, time.time()) < sent
    ):
        rss_peak = max(rss_peak, procstats.group(job.pid).rss_mib)
        time.sleep(1.0)
    time.sleep(3.0)  # a last poll after the final commit
    return rss_peak


def _sink_seconds(lines: list[dict]) -> dict[str, dict[str, float | None]]:
    """Each sink's write seconds over the batches: mean and p95."""
    per_sink: dict[str, list[float]] = {}
    for b in lines:
        for name, secs in b["seconds"].items():
            per_sink.setdefault(name, []).append(secs)
    return {
        name: {"mean": round(statistics.mean(v), 2), "p95": pct(v, 0.95)}
        for name, v in per_sink.items()
    }


def _warm_up(
    opts: PipelineOptions, kinesis: Any, stream: str, job: subprocess.Popen, metrics: Path
) -> int:
    """Wait until Spark has started the query (start-up is not lag), then send the warm-up
    and wait until the job has it: the first commits create the tables and the JVM compiles
    the write path (its JIT compiler takes a third of the job's CPU in its first minute,
    bench.drain), which a steady-state figure must not include. The events sent."""
    log = metrics.parent / "job.log"
    deadline = time.time() + 180
    while b"streaming from" not in log.read_bytes():
        if job.poll() is not None or time.time() > deadline:
            raise RuntimeError(f"the job did not start its query; see {log}")
        time.sleep(0.5)
    warmup = Producer(kinesis, stream, opts.rate, opts.warmup_s, opts.keys)
    warmup.run()
    deadline = time.time() + 300
    while _processed(_metric_lines(metrics), 0, time.time()) < warmup.sent:
        if job.poll() is not None or time.time() > deadline:
            raise RuntimeError(f"the job did not process the warm-up events; see {log}")
        time.sleep(0.5)
    time.sleep(opts.trigger_s)
    return warmup.sent


def _probes(
    settings: Settings, opts: PipelineOptions, database: str, warehouse: str
) -> dict[str, Probe]:
    """Freshness comes from the job's own record (bench.freshness). Polling the tables is a
    spot check that costs the machine CPU the job then lacks (a Trino query ~0.2 CPU-s):
    CoW in Trino every second, the MoR views less often."""
    probes = {}
    if opts.probe:
        probes["hudi_orders_cow"] = Probe(trino_newest(settings, database, "hudi_orders_cow"), 1)
        probes["hudi_orders_mor_ro"] = Probe(
            trino_newest(settings, database, "hudi_orders_mor_ro"), 5
        )
    if opts.probe and opts.rt_probe:
        base = warehouse.replace("s3a://", "s3://") + "/hudi_orders_mor"
        probes["hudi_orders_mor_rt"] = Probe(hudi_rs_newest(settings, base), 5.0)
    return probes


def _polled(probes: dict[str, Probe], producer: Producer, started: float) -> dict[str, dict]:
    """Each probe's latencies over the producer's markers."""
    polled = {}
    for table, probe in probes.items():
        seen = probe.latencies(producer.markers)
        lat = [s for _, s in seen]
        polled[table] = {
            "p50": pct(lat, 0.5),
            "p95": pct(lat, 0.95),
            "seen": len(lat),
            "markers": len(producer.markers),
            "series": [[round(m - started, 1), round(s, 2)] for m, s in seen],
        }
    return polled


# The benchmark's Hudi tables and their types, as every profile names them.
MEASURED_TABLES = {"hudi_orders_cow": "COPY_ON_WRITE", "hudi_orders_mor": "MERGE_ON_READ"}


def tables_freshness(settings: Settings, warehouse: str, since: float, until: float) -> dict:
    """bench.table_freshness of each measured table; a table that cannot be read back gets
    its error in place of figures (the run's other figures stand)."""
    s3 = s3_client(settings.endpoints)

    def read(uri: str) -> list:
        return hudi_rs_table(settings.endpoints, uri.replace("s3a://", "s3://", 1)).read()

    found: dict[str, dict] = {}
    for table, table_type in MEASURED_TABLES.items():
        try:
            found[table] = table_freshness.measure(
                s3, read, f"{warehouse}/{table}", table_type, since, until
            )
        except Exception as error:
            found[table] = {"error": f"{type(error).__name__}: {error}"}
    return found


def _metric_lines(metrics: Path) -> list[dict]:
    """The job's metrics file (BatchWriter's and Spark's progress lines), parsed."""
    if not metrics.exists():
        return []
    return [json.loads(line) for line in metrics.read_text().splitlines()]


def _processed(lines: list[dict], since: float, until: float) -> int:
    """Records of the batches that finished between `since` and `until`."""
    return sum(b["records"] for b in lines if since <= b["finished_at"] <= until)
