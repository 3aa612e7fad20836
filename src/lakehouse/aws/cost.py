"""`lakehouse cost`: what the same pipeline would cost a month on AWS, from list prices kept
as dated data (services/aws/prices.yaml) and the job's CPU per 1,000 events as the drain
benchmark measured it here.

The model, each line printed with its assumption:
- Kinesis: on-demand (stream hours, GB in, GB read once by the job) against provisioned
  (enough shards for the rate, with 25 % headroom, and PUT payload units).
- S3: the raw JSON copy keeps every event (month-end size; a month costs about half of
  it the first month); the Hudi tables hold the latest version of each distinct key, in
  Copy-on-Write and Merge-on-Read (Parquet, compressed to --parquet-ratio of the JSON);
  requests per micro-batch as counted on the sandbox's MinIO (lakehouse bench --s3-requests).
- Glue Data Catalog: the tables and the partitions of the raw copy (one a day per event
  type), one sync per table per batch only when the schema or partitions change.
- Compute: EMR Serverless vCPU- and GB-hours for the measured CPU per 1,000 events plus
  the measured fixed CPU of a micro-batch every --trigger-seconds, at --utilisation, never
  under one vCPU.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from lakehouse.bench import JOB_RECORDS_PER_SHARD
from lakehouse.core.config import REPO_ROOT, SERVICES_DIR

PRICES = SERVICES_DIR / "aws" / "prices.yaml"
BENCH_RESULTS = REPO_ROOT / "bench" / "results"
HOURS_PER_MONTH = 730
SECONDS_PER_MONTH = HOURS_PER_MONTH * 3600
GB = 1e9
# The job's warm CPU-seconds per 1,000 events (drain benchmark, profile fast, median of 3
# on the project's 2-core machine; the README's performance table), used until a drain
# benchmark has run on this machine.
MEASURED_CPU_S_PER_1K = 0.177
# What a micro-batch costs whatever its size (the write clients, commits, listings and
# Spark jobs of four outputs), measured on warm batches of 1,000 orders (`lakehouse bench
# --drain-events 30000 --max-records-per-shard 250`) less those records' own share: per
# event alone a 5 s trigger would be priced far below what the job takes
# (docs/performance.md, *The pipeline under load*).
FIXED_CPU_S_PER_BATCH = 4.9
# S3 requests per micro-batch by price class (deletes are free), counted on the sandbox's
# MinIO for the default tables file (CoW, MoR, raw JSON, quarantine; Hudi's metadata table
# off) by `lakehouse bench --s3-requests`: 219 and 266 PUT/LIST, 283 and 351 GET/HEAD in two
# runs (compactions run by the clock, so their share varies); the middle of each. Most are
# S3A's and Hudi's listings (README, "From the sandbox to AWS").
PUTS_PER_BATCH = 240
GETS_PER_BATCH = 320


class CostError(Exception):
    """An input the estimate cannot use; the message names it."""


@dataclass(frozen=True)
class Workload:
    events_per_sec: float
    event_bytes: int
    distinct_keys: int = 1_000_000
    event_types: int = 1
    trigger_seconds: float = 5.0
    parquet_ratio: float = 0.25
    utilisation: float = 0.6

    def __post_init__(self) -> None:
        for name in ("events_per_sec", "event_bytes", "distinct_keys", "trigger_seconds"):
            if getattr(self, name) <= 0:
                raise CostError(f"--{name.replace('_', '-')} must be above 0")
        if not 0 < self.utilisation <= 1:
            raise CostError("--utilisation must be in (0, 1]")


@dataclass(frozen=True)
class Line:
    service: str
    item: str
    usd: float
    note: str


def load_prices(path: Path = PRICES) -> dict[str, Any]:
    return yaml.safe_load(path.read_text())


# A drain run stands for the job's CPU per event only with the job's own batch size
# (JOB_RECORDS_PER_SHARD) and a few warm batches: one of 1,000-record batches (a
# fixed-cost probe) costs 5 CPU-s per 1,000 events, a 2,000-event run's single warm
# batch 300.
MIN_WARM_BATCHES = 3


def measured_cpu_s_per_1k(results: Path = BENCH_RESULTS) -> tuple[float, str]:
    """The newest drain benchmark's warm CPU-s per 1,000 events of profile fast (of the
    job's default batch size, with MIN_WARM_BATCHES or more), else the README's figure;
    with where it came from."""
    for summary in sorted(results.glob("*/summary.json"), reverse=True):
        drain = json.loads(summary.read_text()).get("drain", {})
        figure = drain.get("profiles", {}).get("fast", {}).get("job_cpu_s_per_1k_events_warm")
        runs = [r for r in drain.get("runs", []) if r.get("profile") == "fast"]
        representative = drain.get("max_records_per_shard") == JOB_RECORDS_PER_SHARD and all(
            r.get("warm_batches", 0) >= MIN_WARM_BATCHES for r in runs
        )
        if figure and representative:
            return float(figure["median"]), f"drain benchmark {summary.parent.name}"
    return MEASURED_CPU_S_PER_1K, "the README's drain benchmark (no run here yet)"


def estimate(work: Workload, cpu_s_per_1k: float, prices: Mapping[str, Any]) -> list[Line]:
    events_month = work.events_per_sec * SECONDS_PER_MONTH
    gb_month = events_month * work.event_bytes / GB
    lines = [*_kinesis(work, gb_month, events_month, prices["kinesis"])]
    lines += _s3(work, gb_month, prices["s3"])
    lines += _glue(work, prices["glue"])
    lines += _compute(work, cpu_s_per_1k, prices["emr_serverless"])
    return lines


def _kinesis(work: Workload, gb: float, events: float, p: Mapping[str, Any]) -> list[Line]:
    on_demand = p["on_demand"]
    od = (
        on_demand["stream_hour"] * HOURS_PER_MONTH
        + on_demand["ingested_gb"] * gb
        + on_demand["retrieved_gb"] * gb
    )
    provisioned = p["provisioned"]
    mb_per_s = work.events_per_sec * work.event_bytes / 1e6
    shards = max(
        1,
        math.ceil(1.25 * mb_per_s / provisioned["shard_ingest_mb_per_s"]),
        math.ceil(1.25 * work.events_per_sec / provisioned["shard_ingest_records_per_s"]),
    )
    units = events * math.ceil(work.event_bytes / 25_000)
    prov = (
        shards * provisioned["shard_hour"] * HOURS_PER_MONTH
        + units / 1e6 * provisioned["put_payload_units_per_million"]
    )
    cheaper = "provisioned" if prov < od else "on-demand"
    return [
        Line("Kinesis", "on-demand", od, f"{gb:,.0f} GB in and read once"),
        Line(
            "Kinesis",
            "provisioned",
            prov,
            f"{shards} shard{'s' if shards > 1 else ''} (25 % headroom); {cheaper} is cheaper",
        ),
    ]


def _s3(work: Workload, gb_month: float, p: Mapping[str, Any]) -> list[Line]:
    raw_gb = gb_month
    tables_gb = 2 * work.distinct_keys * work.event_bytes * work.parquet_ratio / GB
    batches = SECONDS_PER_MONTH / work.trigger_seconds
    return [
        Line(
            "S3", "raw JSON copy", raw_gb * p["standard_gb_month"], f"{raw_gb:,.0f} GB at month end"
        ),
        Line(
            "S3",
            "Hudi tables",
            tables_gb * p["standard_gb_month"],
            f"{tables_gb:,.1f} GB: {work.distinct_keys:,} keys in CoW and MoR",
        ),
        Line(
            "S3",
            "requests",
            batches
            * (
                PUTS_PER_BATCH * p["put_requests_per_1000"]
                + GETS_PER_BATCH * p["get_requests_per_1000"]
            )
            / 1000,
            f"{batches:,.0f} micro-batches of {work.trigger_seconds:g} s, "
            f"{PUTS_PER_BATCH} PUT/LIST and {GETS_PER_BATCH} GET/HEAD each",
        ),
    ]


def _glue(work: Workload, p: Mapping[str, Any]) -> list[Line]:
    objects = 1 + work.event_types * (4 + 31)  # database; tables and a month of partitions
    requests = SECONDS_PER_MONTH / work.trigger_seconds / 100  # syncs only on change
    usd = max(0.0, objects - p["objects_free"]) / 100_000 * p["objects_per_100000_month"]
    usd += max(0.0, requests - p["requests_free_per_month"]) / 1e6 * p["requests_per_million"]
    return [Line("Glue", "Data Catalog", usd, f"{objects:,} objects, ~{requests:,.0f} requests")]


def _compute(work: Workload, cpu_s_per_1k: float, p: Mapping[str, Any]) -> list[Line]:
    per_events = work.events_per_sec * cpu_s_per_1k / 1000
    per_batches = FIXED_CPU_S_PER_BATCH / work.trigger_seconds
    busy_cores = per_events + per_batches
    vcpus = max(1, math.ceil(busy_cores / work.utilisation))
    usd = vcpus * HOURS_PER_MONTH * (p["vcpu_hour"] + p["gb_per_vcpu"] * p["gb_hour"])
    note = (
        f"{vcpus} vCPU ({busy_cores:.2f} busy: {cpu_s_per_1k:g} CPU-s/1k events, "
        f"{FIXED_CPU_S_PER_BATCH:g} CPU-s a batch)"
    )
    return [Line("EMR Serverless", "the job", usd, note)]


def report(work: Workload, lines: list[Line], prices: Mapping[str, Any], cpu_from: str) -> str:
    kinesis = min(line.usd for line in lines if line.service == "Kinesis")
    total = kinesis + sum(line.usd for line in lines if line.service != "Kinesis")
    out = [
        f"Monthly cost on AWS of {work.events_per_sec:,g} events/s of {work.event_bytes:,} bytes "
        f"(list prices of {prices['region']} as of {prices['as_of']}: services/aws/prices.yaml; "
        f"CPU per event from {cpu_from}):",
    ]
    for line in lines:
        out.append(f"  {line.service:<15} {line.item:<14} {line.usd:>10,.2f} USD  {line.note}")
    out.append(f"  {'total':<30} {total:>10,.2f} USD  (the cheaper Kinesis mode)")
    return "\n".join(out)
