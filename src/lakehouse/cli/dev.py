"""`lakehouse bench|java-test`: the project's benchmarks and its JUnit tests."""

from __future__ import annotations

import argparse
import shlex
from pathlib import Path

from lakehouse.bench import JOB_RECORDS_PER_SHARD
from lakehouse.cli.common import (
    Command,
    duration,
    say,
)
from lakehouse.core.config import ConfigError, Settings
from lakehouse.core.fields import same_named
from lakehouse.local import installers


def bench(settings: Settings, args: argparse.Namespace) -> int:
    """Throughput, freshness and cost of the job at fixed input rates; commit cost vs size."""
    from lakehouse.bench.pipeline import parse_variant, profile_settings
    from lakehouse.bench.run import BenchOptions, run_bench

    try:
        variants = tuple(parse_variant(v) for v in args.variant)
    except ValueError as error:
        say(f"error: {error}")
        return 2
    for name, _ in variants:
        try:
            profile_settings(settings, name, variants)  # a wrong setting, before any work
        except ConfigError as error:
            say(f"error: --variant {name}: {error}")
            return 2
    options = same_named(
        BenchOptions,
        args,
        variants=variants,
        pipeline=not args.commit_cost_only,
        commit_cost=args.commit_cost or args.commit_cost_only,
    )
    return run_bench(settings, options, say)


def java_test(settings: Settings, _: argparse.Namespace) -> int:
    """The JUnit tests: the Kinesis source's (offset and shard logic), the job's helpers'
    (crash points, Hudi metrics reporter) and the CDC service's (its Kinesis sink and
    snapshot mark), each run whatever the others give."""
    codes = [installers.run_java_module_tests(m, settings) for m in installers.JAVA_MODULES]
    codes.append(installers.run_cdc_service_tests(settings, say))
    return next((code for code in codes if code), 0)


def _ints(text: str) -> tuple[int, ...]:
    return tuple(int(x) for x in text.split(",") if x)


def _names(text: str) -> tuple[str, ...]:
    return tuple(text.split(","))


def add_bench_arguments(p: argparse.ArgumentParser) -> None:
    """`lakehouse bench`'s options, in the order --help shows them."""
    _rate_arguments(p)
    _commit_cost_arguments(p)
    _profile_arguments(p)
    _drain_and_output_arguments(p)


def _rate_arguments(p: argparse.ArgumentParser) -> None:
    """Rate mode: the rates, how long, the stream and the job's trigger, the probes."""
    p.add_argument(
        "--rates", type=_ints, default=(1000, 2500, 5000), help="input events/s, comma-separated"
    )
    p.add_argument(
        "--run-time",
        "--seconds",
        dest="seconds",
        metavar="DURATION",
        type=duration,
        default=60,
        help="sending time per rate, e.g. 60s, 10m (the budget's figure is over 10m: a job's "
        "JIT compiler is still busy in its first minutes, see the p95 by minute; --seconds "
        "is its former name)",
    )
    p.add_argument("--keys", type=int, default=50_000, help="distinct order ids sent")
    p.add_argument("--shards", type=int, default=4)
    p.add_argument(
        "--trigger",
        dest="trigger_s",
        metavar="DURATION",
        type=duration,
        default=2.0,
        help="job trigger interval (2s)",
    )
    p.add_argument(
        "--drain",
        dest="drain_s",
        metavar="DURATION",
        type=duration,
        default=60,
        help="longest wait after sending (default: 60s)",
    )
    p.add_argument(
        "--profiles",
        type=_names,
        default=("fast", "baseline"),
        help="job profiles to compare: fast, baseline (table layouts), hudi-sink (Hudi's "
        "streaming sink, the Hudi tables only), hudi-sink-all (Hudi's sink for the tables and "
        "the quarantine, Spark's JSON file sink for the raw copy: every output the job "
        "writes), fast-nometrics (fast without its Prometheus metrics and Hudi's)",
    )
    p.add_argument(
        "--warmup",
        dest="warmup_s",
        metavar="DURATION",
        type=duration,
        default=60,
        help="time sent at the rate before measuring (60s)",
    )
    p.add_argument(
        "--probe",
        action="store_true",
        help="also poll the tables (Trino, hudi-rs) for freshness as readers see it: a spot "
        "check that takes CPU from the job, and the only freshness of hudi-sink",
    )
    p.add_argument(
        "--no-rt-probe", dest="rt_probe", action="store_false", help="with --probe: skip hudi-rs"
    )


def _commit_cost_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--commit-cost", action="store_true", help="also per-commit cost vs size")
    p.add_argument("--commit-cost-only", action="store_true")
    p.add_argument("--commit-sizes", type=_ints, default=(10_000, 100_000, 1_000_000))
    p.add_argument("--commit-batch", type=int, default=10_000)


def _profile_arguments(p: argparse.ArgumentParser) -> None:
    """The job's options in every profile, and profiles of the user's own."""
    p.add_argument(
        "--job-args",
        type=lambda text: tuple(shlex.split(text)),
        default=(),
        help='extra job options, e.g. "--trigger-seconds 4"',
    )
    p.add_argument(
        "--variant",
        action="append",
        default=[],
        metavar="NAME=JOB_OPTIONS",
        help="a profile of your own to compare, run interleaved after --profiles: the fast "
        "profile with these job options, e.g. --variant 'noreadahead=--kinesis-option "
        "readAhead=false'; leading SETTING=VALUE words set versions.env or services/*.env for "
        "its job, e.g. 'hudi102=HUDI_VERSION=1.0.2 ...' (repeatable)",
    )


def _drain_and_output_arguments(p: argparse.ArgumentParser) -> None:
    """Drain mode, repeats, the S3 request count, and what is kept or written."""
    p.add_argument(
        "--drain-events",
        type=int,
        default=0,
        help="drain mode: fill a stream with this many orders first, then each profile "
        "drains it alone (--available-now), --repeat times interleaved",
    )
    p.add_argument(
        "--repeat",
        type=int,
        default=0,
        help="runs per profile, interleaved, reported as medians and ranges (default: 3 in "
        "drain mode, 1 in rate mode)",
    )
    p.add_argument(
        "--max-records-per-shard",
        type=int,
        default=JOB_RECORDS_PER_SHARD,
        help="drain mode: batch size per shard (default: the job's own default)",
    )
    p.add_argument(
        "--s3-requests",
        action="store_true",
        help="only count the S3 requests of a micro-batch on MinIO (lakehouse cost's input)",
    )
    p.add_argument(
        "--keep-tables",
        action="store_true",
        help="keep each run's tables in the bucket and the metastore (by default they are "
        "removed once the run is measured; a failed run's are kept)",
    )
    p.add_argument(
        "--json", dest="json_path", metavar="FILE", type=Path, help="also write the summary here"
    )


COMMANDS = {
    "bench": Command(
        bench,
        "benchmark the job: throughput, freshness, CPU, commit cost",
        "development",
        "lakehouse bench --rates 1000 --run-time 2m\n"
        "lakehouse bench --drain-events 200000 --profiles fast",
        add_bench_arguments,
    ),
    "java-test": Command(
        java_test,
        "run the JUnit tests (Kinesis source, CDC service)",
        "development",
        "lakehouse java-test",
    ),
}
