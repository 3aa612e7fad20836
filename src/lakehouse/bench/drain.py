"""Drain capacity: the job alone, reading a stream filled beforehand, nothing else busy.

A rate benchmark on a 2-core machine mostly measures contention: the producer, the
probes and Trino take CPU the job then lacks. Here the stream is filled once, first
(orders over `keys` order ids, as the rate benchmark sends them, and a share of invalid
ones, so that every batch writes the quarantine too), then each profile
drains it in turn with `--available-now`, from the stream's start, into tables of its
own: the same records for every run, and no other work while it runs. Profiles are
interleaved (A B A B ...) `repeat` times and each figure is reported as the median and
the spread (min, max) of its runs.

Per run: events/s over the whole run (job start to last commit) and over the warm
batches (those after the first half of the events: the first half creates the tables and
warms the JVM's JIT compiler, which takes about 2.5 minutes of a fresh job and, in the first
minute, a third of its CPU), job CPU-seconds per 1,000 events (the whole process group;
start-up, before the first batch, apart), the JIT compiler's share of the warm CPU (how
warm "warm" was), peak resident memory, and the CPU every other stack process used
meanwhile (near zero when the figure is the job's alone).
"""

from __future__ import annotations

import itertools
import json
import os
import signal
import statistics
import subprocess
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lakehouse.bench import JOB_RECORDS_PER_SHARD, leftovers
from lakehouse.bench.pipeline import (
    COMPONENTS,
    Variants,
    iso,
    job_module,
    job_profile_args,
    order_event,
    orders_only,
    profile_settings,
)
from lakehouse.core import procstats
from lakehouse.core.bootstrap import delete_stream, ensure_stream
from lakehouse.core.clients import kinesis_client
from lakehouse.core.config import Settings
from lakehouse.local.job_launcher import job_command, job_env

PUT_BATCH = 500  # PutRecords' maximum


@dataclass(frozen=True)
class DrainOptions:
    events: int = 1_200_000  # 15 batches of 80,000 from 4 shards at the default batch size
    keys: int = 50_000
    invalid_share: float = 0.01  # of the events: orders whose amount is text (quarantined)
    shards: int = 4
    max_records_per_shard: int = JOB_RECORDS_PER_SHARD
    profiles: tuple[str, ...] = ("fast",)
    repeat: int = 3
    warm_share: float = 0.5  # the warm batches come after this share of the events
    job_args: tuple[str, ...] = ()
    variants: Variants = ()
    keep_tables: bool = False  # True: leave each run's tables in the bucket and metastore


def order_payloads(events: int, keys: int, invalid_share: float = 0.0) -> list[bytes]:
    """`events` orders over `keys` order ids: each id created once, then updated; one in
    1/`invalid_share` carries its amount as text, which the job quarantines ("wrong type")."""
    now = iso(time.time())
    every = invalid_every(invalid_share)
    payloads = []
    for n in range(1, events + 1):
        event = order_event(n, keys, now)
        if every and n % every == 0:
            event["amount"] = f"{event['amount']} EUR"
        payloads.append(json.dumps(event).encode())
    return payloads


def fill(client: Any, stream: str, payloads: Sequence[bytes], say: Callable[[str], None]) -> float:
    """Puts every payload (built beforehand) onto the stream; returns events/s."""
    started = time.monotonic()
    for i in range(0, len(payloads), PUT_BATCH):
        chunk = payloads[i : i + PUT_BATCH]
        records = [{"Data": data, "PartitionKey": str(i + k)} for k, data in enumerate(chunk)]
        for _attempt in range(20):
            response = client.put_records(StreamName=stream, Records=records)
            if not response["FailedRecordCount"]:
                break
            # Throttled: only the refused ones again, in their order.
            records = [
                r
                for r, result in zip(records, response["Records"], strict=True)
                if "ErrorCode" in result
            ]
            time.sleep(0.2)
        else:
            raise RuntimeError(f"the Kinesis engine kept refusing records of {stream}")
        if (i // PUT_BATCH) % 40 == 39:
            say(f"    filled {i + len(chunk):,} of {len(payloads):,}")
    return len(payloads) / max(1e-9, time.monotonic() - started)


def invalid_every(share: float) -> int:
    """Every how many events one is invalid (0: none)."""
    return round(1 / share) if share else 0


@dataclass(frozen=True)
class CpuSample:
    at: float  # time.time()
    cpu_s: float
    jit_s: float = 0.0  # of which the JIT compiler's threads


def cpu_at(samples: Sequence[CpuSample], at: float, jit: bool = False) -> float:
    """The job's CPU-seconds (`jit`: its JIT compiler's) at time `at`, interpolated
    between samples."""

    def value(sample: CpuSample) -> float:
        return sample.jit_s if jit else sample.cpu_s

    if at <= samples[0].at:
        return value(samples[0])
    for before, after in itertools.pairwise(samples):
        if before.at <= at <= after.at:
            span = after.at - before.at
            share = (at - before.at) / span if span else 1.0
            return value(before) + share * (value(after) - value(before))
    return value(samples[-1])


def warm_from(batches: Sequence[dict], share: float) -> int:
    """How many leading batches it takes to write `share` of the events: the warm
    batches are the ones after them."""
    target = share * sum(b["records"] for b in batches)
    written = 0
    for i, batch in enumerate(batches):
        if written >= target:
            return i
        written += batch["records"]
    return len(batches)


def completed_batches(lines: Sequence[dict]) -> list[dict]:
    """One line per micro-batch, done when every query of the writer has written it: the
    job's own line and Spark's progress line, or each of Hudi's sink's queries (only one of
    them counts records; reading the same stream with the same batch size, their batch ids
    cover the same records). A line without a batch id is a batch of its own."""
    found: dict[object, dict] = {}
    for at, line in enumerate(lines):
        key = line.get("batch_id", ("line", at))
        started = line["finished_at"] - batch_seconds(line)
        batch = found.setdefault(
            key, {"records": 0, "started_at": started, "finished_at": line["finished_at"]}
        )
        batch["records"] += line["records"]
        batch["started_at"] = min(batch["started_at"], started)
        batch["finished_at"] = max(batch["finished_at"], line["finished_at"])
    return list(found.values())


def summarise_run(
    lines: Sequence[dict], samples: Sequence[CpuSample], started: float, warm_share: float
) -> dict:
    """The figures of one drain from the job's metrics lines (records, seconds,
    finished_at, batch_id: BatchWriter's and Spark's progress) and its CPU samples."""
    batches = completed_batches(lines)
    last = max((b["finished_at"] for b in batches), default=0.0)
    batches = sorted((b for b in batches if b["records"]), key=lambda b: b["finished_at"])
    if not batches:
        raise RuntimeError("the job wrote no batch")
    events = sum(b["records"] for b in batches)
    first_start = batches[0]["started_at"]
    startup_cpu = cpu_at(samples, first_start)
    figures: dict[str, Any] = {
        "events": events,
        "batches": len(batches),
        "batch_records_median": statistics.median(b["records"] for b in batches),
        "seconds_to_first_batch": round(first_start - started, 1),
        "events_per_s_whole_run": round(events / (last - started), 1),
        "job_cpu_s_startup": round(startup_cpu, 1),
        "job_cpu_s_per_1k_events_whole_run": round(1000 * cpu_at(samples, last) / events, 3),
        "job_jit_cpu_s_whole_run": round(cpu_at(samples, last, jit=True), 1),
    }
    warm_after = warm_from(batches, warm_share)
    warm = batches[warm_after:]
    if warm:
        since = batches[warm_after - 1]["finished_at"] if warm_after else first_start
        warm_events = sum(b["records"] for b in warm)
        cpu = cpu_at(samples, last) - cpu_at(samples, since)
        figures["events_per_s_warm"] = round(warm_events / (last - since), 1)
        figures["job_cpu_s_per_1k_events_warm"] = round(1000 * cpu / warm_events, 3)
        jit = cpu_at(samples, last, jit=True) - cpu_at(samples, since, jit=True)
        figures["job_jit_share_warm"] = round(jit / cpu, 3) if cpu else 0.0
        figures["warm_batches"] = len(warm)
        figures["warm_batch_seconds_median"] = statistics.median(
            b["finished_at"] - b["started_at"] for b in warm
        )
    return figures


def batch_seconds(line: dict) -> float:
    """How long a batch wrote: the job's own figure, or Spark's whole trigger (Hudi's sink)."""
    seconds = line["seconds"]
    if "batch" in seconds:
        return float(seconds["batch"])
    return float(next((v for k, v in seconds.items() if k.endswith(".triggerExecution")), 0.0))


def spread(values: Sequence[float]) -> dict[str, float]:
    """Median and range of one figure over repeats."""
    return {
        "median": round(statistics.median(values), 3),
        "min": round(min(values), 3),
        "max": round(max(values), 3),
        "n": len(values),
    }


SPREAD_FIGURES = (
    "events_per_s_warm",
    "events_per_s_whole_run",
    "job_cpu_s_per_1k_events_warm",
    "job_cpu_s_per_1k_events_whole_run",
    "job_cpu_s_startup",
    "job_jit_share_warm",
    "job_rss_mib_peak",
)


def by_profile(runs: Sequence[dict]) -> dict[str, dict]:
    """Each profile's figures over its runs (median and range)."""
    found: dict[str, dict] = {}
    for profile in dict.fromkeys(r["profile"] for r in runs):
        mine = [r for r in runs if r["profile"] == profile]
        found[profile] = {
            name: spread([r[name] for r in mine]) for name in SPREAD_FIGURES if name in mine[0]
        }
    return found


def run_drain(
    settings: Settings, opts: DrainOptions, out: Path, say: Callable[[str], None]
) -> dict:
    tag = uuid.uuid4().hex[:6]
    stream = f"drain-{tag}"
    kinesis = kinesis_client(settings.endpoints)
    ensure_stream(kinesis, stream, shards=opts.shards)
    try:
        say(
            f"  filling {stream}: {opts.events:,} orders over {opts.keys:,} keys, "
            f"{opts.invalid_share:.1%} of them invalid"
        )
        payloads = order_payloads(opts.events, opts.keys, opts.invalid_share)
        fill_rate = fill(kinesis, stream, payloads, say)
        say(f"    filled at {fill_rate:,.0f} events/s")
        runs = []
        for i in range(opts.repeat):
            for profile in opts.profiles:
                say(f"  run {i + 1}/{opts.repeat}: {profile} drains {opts.events:,} events")
                run = drain_once(settings, opts, stream, profile, out / f"{profile}-{i + 1}")
                say("    " + one_line(run))
                if not opts.keep_tables:
                    database = run["database"]
                    leftovers.remove_run(settings, f"bench/{database}/", (database,), say)
                runs.append(run)
        return {
            "events": opts.events,
            "keys": opts.keys,
            "invalid_share": opts.invalid_share,
            "shards": opts.shards,
            "max_records_per_shard": opts.max_records_per_shard,
            "fill_events_per_s": round(fill_rate, 0),
            "runs": runs,
            "profiles": by_profile(runs),
        }
    finally:
        delete_stream(kinesis, stream)


def available_now_args(settings: Settings, stream: str, database: str, workdir: Path) -> list[str]:
    """A job that reads `stream` from its start to its end into tables of its own (under
    bench/<database>/ in the bucket), the benchmark's orders table only."""
    base = f"s3a://{settings['LAKEHOUSE_BUCKET']}/bench/{database}"
    return [
        "--available-now",
        *("--stream", stream, "--database", database),
        *("--warehouse", f"{base}/warehouse", "--raw", f"{base}/raw"),
        *("--checkpoint", f"{base}/checkpoint"),
        *("--metastore-uri", settings.hms_uri, "--kinesis-endpoint", settings.kinesis_endpoint),
        *("--starting-position", "TRIM_HORIZON"),
        *("--tables", str(orders_only(workdir / "tables.yaml"))),
    ]


def _watch(
    job: subprocess.Popen, started: float
) -> tuple[list[CpuSample], dict[int, tuple[str, float]], float]:
    """Sample the job's CPU (its JIT's apart), threads and memory until it exits (killed
    if this is interrupted): the samples, every thread seen (ended ones too), peak RSS."""
    samples = [CpuSample(started, 0.0)]
    rss_peak = 0.0
    threads: dict[int, tuple[str, float]] = {}
    try:
        while job.poll() is None:
            sample = procstats.group(job.pid)
            threads.update(procstats.threads(job.pid))
            if sample.cpu_s:  # zero once the group is gone
                jit = sum(cpu for name, cpu in threads.values() if name in procstats.JIT_THREADS)
                samples.append(CpuSample(time.time(), sample.cpu_s, jit))
                rss_peak = max(rss_peak, sample.rss_mib)
            time.sleep(0.5)
    finally:
        if job.poll() is None:
            os.killpg(job.pid, signal.SIGKILL)
    return samples, threads, rss_peak


def _all_invalid_quarantined(
    opts: DrainOptions, lines: list[dict], profile: str, workdir: Path
) -> int:
    """The job counts what it quarantined (Hudi's sink does not): all of the invalid ones,
    or the run is wrong."""
    every = invalid_every(opts.invalid_share)
    invalid = opts.events // every if every else 0
    quarantined = sum(line.get("quarantined", 0) for line in lines)
    if quarantined != invalid:
        raise RuntimeError(
            f"the {profile} job quarantined {quarantined:,} events of the {invalid:,} "
            f"invalid ones; see {workdir}/job.log"
        )
    return quarantined


def drain_once(
    settings: Settings, opts: DrainOptions, stream: str, profile: str, workdir: Path
) -> dict:
    database = f"drain_{uuid.uuid4().hex[:6]}"
    workdir.mkdir(parents=True, exist_ok=True)
    metrics = workdir / "batches.jsonl"
    args = [
        *available_now_args(settings, stream, database, workdir),
        *("--max-records-per-shard", str(opts.max_records_per_shard)),
        *("--metrics-file", str(metrics)),
        *job_profile_args(profile, opts.variants),
        *opts.job_args,
    ]
    others_before = procstats.by_command(COMPONENTS)
    started = time.time()
    with open(workdir / "job.log", "wb") as log:
        job = subprocess.Popen(
            job_command(args, module=job_module(args)),
            env=job_env(profile_settings(settings, profile, opts.variants)),
            stdout=log,
            stderr=log,
            start_new_session=True,
        )
    samples, threads, rss_peak = _watch(job, started)
    others_after = procstats.by_command(COMPONENTS)
    if job.returncode != 0:
        raise RuntimeError(f"the {profile} job exited {job.returncode}; see {workdir}/job.log")
    lines = [json.loads(line) for line in metrics.read_text().splitlines()]
    (workdir / "cpu.json").write_text(json.dumps([[c.at, c.cpu_s, c.jit_s] for c in samples]))
    (workdir / "threads.json").write_text(
        json.dumps(procstats.cpu_by_thread_kind(threads), indent=1)
    )
    run = summarise_run(lines, samples, started, opts.warm_share)
    if run["events"] != opts.events:
        raise RuntimeError(
            f"the {profile} job read {run['events']:,} events of {opts.events:,}; "
            f"see {workdir}/job.log"
        )
    if any("quarantined" in line for line in lines):
        run["quarantined"] = _all_invalid_quarantined(opts, lines, profile, workdir)
    return {
        "profile": profile,
        **run,
        "job_rss_mib_peak": round(rss_peak, 0),
        "other_processes_cpu_s": {
            name: round(others_after[name].cpu_s - others_before[name].cpu_s, 1)
            for name in COMPONENTS
            if others_after[name].cpu_s
        },
        "workdir": str(workdir),
        "database": database,
    }


def one_line(run: dict) -> str:
    warm = (
        f"warm {run['events_per_s_warm']:,.0f} events/s, "
        f"{run['job_cpu_s_per_1k_events_warm']} CPU-s/1k "
        f"({run['job_jit_share_warm']:.0%} JIT) over {run['warm_batches']}; "
        if "events_per_s_warm" in run
        else ""
    )
    others = sum(run["other_processes_cpu_s"].values())
    return (
        f"{run['batches']} batches, {warm}whole run {run['events_per_s_whole_run']:,.0f} "
        f"events/s, {run['job_cpu_s_per_1k_events_whole_run']} CPU-s/1k "
        f"(start-up {run['job_cpu_s_startup']} CPU-s), {run['job_rss_mib_peak']:.0f} MiB; "
        f"other processes {others:.1f} CPU-s"
    )
