"""Per-commit cost of the job's Hudi upserts as the table grows (the flat-cost benchmark).

Drives the job's own write path (sinks.write_hudi with hudi_options for a profile) in a
local Spark session against the running stack's S3 and metastore: the table is grown to
each size with inserts, then `--commits` upserts of `--batch` rows are timed. The batch is
an orders CDC mix: half creates of new keys, half updates of keys created recently
(`--recent` newest keys), as an order is paid and shipped soon after it is placed; with
`--spread uniform` the updates hit any key instead (the worst case for Copy-on-Write).

Variants are measured round-robin (commit i of every variant, then commit i+1), so JIT
warm-up and machine noise fall on all alike. Each commit's wall time and CPU seconds
(this process group: the Python driver and Spark's JVM) are recorded. Prints one JSON
line per measured commit and writes the whole result to --json.
Run through `lakehouse bench --commit-cost` (it sets up the Spark environment).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
import uuid
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import cast

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

# The benchmark runs from local mode, beside the lakehouse CLI package.
from lakehouse.core import procstats
from lakehouse_job import write_turns
from lakehouse_job.hudi_options import (
    PROFILES,
    Profile,
    SinkSettings,
    hudi_options,
    lock_folder,
    table_path,
)
from lakehouse_job.spark_schema import valid_row_type
from lakehouse_job.write_turns import Turns
from lakehouse_tables import columns
from lakehouse_tables.declarations import TABLES_YAML, TableSpec, TableType, load_tables


def orders_rows(spec: TableSpec, keys: DataFrame, ts: datetime, op: str) -> DataFrame:
    """Valid order rows for the key ids in `keys` (column `id`), typed as the job's rows."""
    day = ts.strftime("%Y-%m-%d")
    frame = keys.select(
        F.format_string("o%012d", F.col("id")).alias("order_id"),
        F.format_string("cust-%05d", F.col("id") % 5000).alias("customer_id"),
        (F.col("id") % 1000).cast("double").alias("amount"),
        F.lit("paid" if op == "u" else "placed").alias("status"),
        F.lit(ts).cast("timestamp").alias("order_ts"),
        F.lit(day).alias(spec.partition_name),
        F.lit(op).alias(columns.OP),
        F.lit(False).alias(columns.IS_DELETED),
        F.lit("shardId-000000000000").alias(columns.INGEST_SHARD),
        F.format_string("%d", F.col("id")).alias(columns.INGEST_SEQ),
        F.lit(None).cast("long").alias(columns.INGEST_SUBSEQ),
        F.lit(ts).cast("timestamp").alias(columns.ARRIVAL_TS),
    )
    # Declared columns it does not fill (the line items) are null, as in the drain
    # benchmark's orders (bench.pipeline.order_event).
    return frame.select(
        *[
            (F.col(f.name) if f.name in frame.columns else F.lit(None))
            .cast(f.dataType)
            .alias(f.name)
            for f in valid_row_type(spec).fields
        ]
    )


def cdc_batch(
    spark: SparkSession, spec: TableSpec, size: int, batch: int, recent: int, spread: str, seed: int
) -> DataFrame:
    """`batch` rows: batch/2 new keys after `size`, batch/2 updates of existing keys."""
    ts = datetime.now(UTC)
    creates = spark.range(size, size + batch // 2)
    window = size if spread == "uniform" else min(size, recent)
    updates = (
        spark.range(batch - batch // 2)
        .select((size - 1 - (F.rand(seed) * window).cast("long")).alias("id"))
        .dropDuplicates(["id"])
    )
    return orders_rows(spec, creates, ts, "c").unionByName(orders_rows(spec, updates, ts, "u"))


def grow(
    spark: SparkSession,
    spec: TableSpec,
    table_type: TableType,
    sink: SinkSettings,
    start: int,
    end: int,
) -> None:
    """Add keys `start`..`end` (the table holds keys 0..start) in key order, as a stream
    would have: files hold key ranges.

    Bucket-indexed tables take inserts (keys hash to buckets anyway); the others a
    globally sorted bulk insert.
    """
    if start >= end:
        return
    options = hudi_options(spec, table_type, sink) | {"hoodie.datasource.hive_sync.enable": "false"}
    if options.get("hoodie.index.type") == "BUCKET":
        options["hoodie.datasource.write.operation"] = "insert"
    else:
        options["hoodie.datasource.write.operation"] = "bulk_insert"
        options["hoodie.bulkinsert.sort.mode"] = "GLOBAL_SORT"
        options["hoodie.bulkinsert.shuffle.parallelism"] = str(max(1, (end - start) // 20_000))
    rows = orders_rows(spec, spark.range(start, end), datetime.now(UTC), "c")
    rows.write.format("hudi").options(**options).mode("append").save(
        table_path(sink, spec, table_type)
    )


SYNC_EVERY = "sync.every.commit"
# A variant's `lock.url=host:port`: its tables take the lock every writer shares there
# (ZooKeeper, hudi_options.concurrency_options) and each upsert its table's write turn
# (write_turns), as the job's writes do with --lock-url: the lock's cost per commit.
LOCK_URL = "lock.url"
BENCH_ONLY = (SYNC_EVERY, LOCK_URL)


@dataclass(frozen=True)
class Variant:
    """A profile, optionally with Hudi options changed: one lever measured at a time."""

    label: str
    profile: Profile
    options: dict[str, str]

    @property
    def sync_every_commit(self) -> bool:
        return self.profile == "baseline" or self.options.get(SYNC_EVERY) == "true"

    @staticmethod
    def parse(text: str) -> Variant:
        """`profile` or `label:profile:key=value,key=value` (`sync.every.commit=true`: as
        the baseline does, instead of the job's once per run)."""
        if ":" not in text:
            return Variant(text, _profile(text), {})
        label, profile, pairs = text.split(":", 2)
        options = dict(pair.split("=", 1) for pair in pairs.split(",") if pair)
        return Variant(label, _profile(profile), options)


def _profile(name: str) -> Profile:
    if name not in PROFILES:
        raise SystemExit(f"unknown profile {name!r}: one of {', '.join(PROFILES)}")
    return name


def upsert(
    rows: DataFrame,
    spec: TableSpec,
    table_type: TableType,
    sink: SinkSettings,
    v: Variant,
    sync: bool,
) -> None:
    """sinks.write_hudi, with the variant's options on top."""
    extra = {k: val for k, val in v.options.items() if k not in BENCH_ONLY}
    options = hudi_options(spec, table_type, sink, sync) | extra
    with turns_for(rows.sparkSession, sink).turn(spec.table_name(table_type)):
        rows.write.format("hudi").options(**options).mode("append").save(
            table_path(sink, spec, table_type)
        )


_TURNS: dict[str, Turns] = {}


def turns_for(spark: SparkSession, sink: SinkSettings) -> Turns:
    """One ZooKeeper client per lock URL for the whole run (none without a lock)."""
    if sink.lock_url not in _TURNS:
        _TURNS[sink.lock_url] = write_turns.for_sink(
            spark._jvm, sink.lock_url, lock_folder(sink), sink.lock_session_ms
        )
    return _TURNS[sink.lock_url]


def _sink(args: argparse.Namespace, tag: str, v: Variant) -> SinkSettings:
    return SinkSettings(
        base_path=f"{args.base.rstrip('/')}/{tag}/{v.label}",
        raw_base_path="",
        database=f"commitbench_{tag}_{v.label.replace('-', '_')}",
        metastore_uri=args.metastore_uri,
        hive_sync=bool(args.metastore_uri),
        profile=v.profile,
        lock_url=v.options.get(LOCK_URL, ""),
    )


WARM_UP_KEYS = 20_000


def warm_up(
    spark: SparkSession, spec: TableSpec, args: argparse.Namespace, tag: str, v: Variant
) -> None:
    """A few discarded commits per table type: the first variant measured would otherwise
    pay for JIT compilation and class loading."""
    sink = replace(_sink(args, tag, replace(v, label="warm-up")), hive_sync=False)
    for tt in cast(list[TableType], args.table_types.split(",")):
        grow(spark, spec, tt, sink, 0, WARM_UP_KEYS)
        for i in range(3):
            size = keys_after(WARM_UP_KEYS, i, args.batch)
            rows = cdc_batch(spark, spec, size, args.batch, args.recent, args.spread, seed=i)
            upsert(rows, spec, tt, sink, v, sync=False)


def keys_after(grown_to: int, commits: int, batch: int) -> int:
    """Keys in a table grown to `grown_to`, after `commits` cdc_batch upserts (each creates
    batch // 2 new keys)."""
    return grown_to + commits * (batch // 2)


def medians(results: list[dict], field: str) -> dict[str, float]:
    """Per `variant/table type/keys`, the median of `field` over all but the first commit
    (which also syncs the metastore and warms the table's caches)."""
    groups: dict[str, list[float]] = {}
    for r in results:
        if r["commit"] > 0:
            groups.setdefault(f"{r['profile']}/{r['table_type']}/{r['keys']}", []).append(r[field])
    return {key: statistics.median(values) for key, values in sorted(groups.items())}


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    spec = load_tables(TABLES_YAML)["orders"]
    sizes = [int(s) for s in args.sizes.split(",")]
    variants = [Variant.parse(v) for v in [*args.profiles.split(","), *args.variant] if v]
    spark = SparkSession.builder.master(args.master).appName("commit-bench").getOrCreate()
    spark.sparkContext.setLogLevel("WARN")
    tag = uuid.uuid4().hex[:6]
    warm_up(spark, spec, args, tag, variants[0])
    tables = [
        (v, tt, _sink(args, tag, v))
        for v in variants
        for tt in cast(list[TableType], args.table_types.split(","))
    ]
    results = _measure(spark, spec, args, sizes, tables)
    summary = _summary(args, variants, results, tag, tables)
    Path(args.json).write_text(json.dumps(summary, indent=2))
    print(json.dumps(summary["median_seconds"], indent=2))
    spark.stop()
    return 0


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--sizes", default="10000,100000,1000000")
    p.add_argument("--batch", type=int, default=10_000)
    p.add_argument("--commits", type=int, default=4)
    p.add_argument("--recent", type=int, default=10_000)
    p.add_argument("--spread", choices=["recent", "uniform"], default="recent")
    p.add_argument(
        "--profiles",
        default="baseline,fast",
        help="comma-separated variants: a profile, or label:profile:hoodie.key=value,...",
    )
    p.add_argument("--variant", action="append", default=[], help="one more variant (repeatable)")
    p.add_argument("--table-types", default="COPY_ON_WRITE,MERGE_ON_READ")
    p.add_argument("--base", required=True, help="s3a:// folder for the bench tables")
    p.add_argument("--metastore-uri", default="")
    p.add_argument("--master", default="local[2]")
    p.add_argument("--json", required=True)
    return p


BenchTable = tuple[Variant, TableType, SinkSettings]


def _measure(
    spark: SparkSession,
    spec: TableSpec,
    args: argparse.Namespace,
    sizes: list[int],
    tables: list[BenchTable],
) -> list[dict]:
    """Every table grown to each size, then `--commits` timed upserts of each; one row per
    commit, printed as it is measured."""
    results: list[dict] = []
    held = 0  # keys every table holds
    for target in sizes:
        for _, tt, sink in tables:
            grow(spark, spec, tt, sink, held, target)
        held = max(held, target)
        # Round-robin, so that JIT warm-up and machine noise fall on every variant alike.
        for i in range(args.commits):
            for v, tt, sink in tables:
                # As the job does (metastore_sync.MetastoreSync): baseline syncs every commit, the
                # fast profile once per run and table.
                sync = v.sync_every_commit or (target == sizes[0] and i == 0)
                seconds, cpu = _timed_upsert(spark, spec, args, (v, tt, sink), held, i, sync)
                row = {
                    "profile": v.label,
                    "table_type": tt,
                    "keys": target,
                    "commit": i,
                    "seconds": round(seconds, 3),
                    "cpu_s": round(cpu, 2),
                }
                results.append(row)
                print(json.dumps(row), flush=True)
        held = keys_after(held, args.commits, args.batch)
    return results


def _timed_upsert(
    spark: SparkSession,
    spec: TableSpec,
    args: argparse.Namespace,
    table: BenchTable,
    held: int,
    i: int,
    sync: bool,
) -> tuple[float, float]:
    """Upsert commit `i`'s CDC batch (made and cached first, outside the timing) into
    `table`; its wall seconds and this process group's CPU seconds."""
    v, tt, sink = table
    size = keys_after(held, i, args.batch)
    rows = cdc_batch(spark, spec, size, args.batch, args.recent, args.spread, seed=i)
    rows = rows.persist()
    rows.count()
    began, cpu_before = time.monotonic(), procstats.group(os.getpgrp()).cpu_s
    upsert(rows, spec, tt, sink, v, sync)
    seconds = time.monotonic() - began
    cpu = procstats.group(os.getpgrp()).cpu_s - cpu_before
    rows.unpersist()
    return seconds, cpu


def _summary(
    args: argparse.Namespace,
    variants: list[Variant],
    results: list[dict],
    tag: str,
    tables: list[BenchTable],
) -> dict:
    return {
        "batch": args.batch,
        "spread": args.spread,
        "recent": args.recent,
        "variants": [v.__dict__ for v in variants],
        "commits": results,
        "median_seconds": medians(results, "seconds"),
        "median_cpu_s": medians(results, "cpu_s"),
        # Where the tables are, for lakehouse bench to remove them (bench.leftovers).
        "prefix": f"{args.base.rstrip('/')}/{tag}/",
        "databases": sorted({sink.database for _, _, sink in tables}),
    }


if __name__ == "__main__":
    sys.exit(main())
