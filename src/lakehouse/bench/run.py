"""`lakehouse bench`: the pipeline benchmark and the commit-cost benchmark, one results folder.

Needs the local stack running (`KINESIS_ENGINE=kinesalite make local-up` above ~500
events/s); starts only the jobs it measures. Writes bench/results/<timestamp>/:
summary.json, PNG plots, and each job's log and per-batch metrics.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import asdict, dataclass
from datetime import datetime
from pathlib import Path

from lakehouse.bench import JOB_RECORDS_PER_SHARD, leftovers, pipeline
from lakehouse.bench.drain import DrainOptions, run_drain, spread
from lakehouse.bench.pipeline import (
    KINESIS_ENGINES,
    SINK_WRITERS,
    PipelineOptions,
    Variants,
    profile_settings,
    run_pipeline,
)
from lakehouse.bench.plots import write_plots
from lakehouse.bench.warmup import ensure_class_archive
from lakehouse.core import procstats
from lakehouse.core.config import REPO_ROOT, Settings
from lakehouse.core.fields import same_named
from lakehouse.local import stack
from lakehouse.local.job_launcher import job_env


@dataclass(frozen=True)
class BenchOptions:
    rates: tuple[int, ...] = (1000, 2500, 5000)
    seconds: float = 60.0
    keys: int = 50_000
    shards: int = 4
    trigger_s: float = 2.0
    drain_s: float = 60.0
    profiles: tuple[str, ...] = ("fast", "baseline")
    warmup_s: float = 60.0
    probe: bool = False
    rt_probe: bool = True
    job_args: tuple[str, ...] = ()
    variants: Variants = ()  # the user's profiles (pipeline.parse_variant), run after profiles
    commit_cost: bool = False
    commit_sizes: tuple[int, ...] = (10_000, 100_000, 1_000_000)
    commit_batch: int = 10_000
    pipeline: bool = True
    drain_events: int = 0  # > 0: drain mode (bench.drain) instead of the rate runs
    repeat: int = 0  # runs per profile, interleaved; 0: 3 in drain mode, 1 in rate mode
    max_records_per_shard: int = JOB_RECORDS_PER_SHARD
    json_path: Path | None = None
    out_root: Path = REPO_ROOT / "bench" / "results"
    s3_requests: bool = False  # S3 requests per micro-batch only (bench.s3_requests)
    keep_tables: bool = False  # leave each run's tables (bench.leftovers)

    @property
    def all_profiles(self) -> tuple[str, ...]:
        """--profiles, then the user's variants."""
        return (*self.profiles, *(name for name, _ in self.variants))


def run_bench(settings: Settings, opts: BenchOptions, say: Callable[[str], None]) -> int:
    down = [row.name for row in stack.statuses(settings) if row.state != "running"]
    if down:
        say(
            f"error: the local stack is not running ({', '.join(down)}): start it with "
            "`KINESIS_ENGINE=kinesalite make local-up` (the fast Kinesis engine), then re-run"
        )
        return 2
    out = opts.out_root / datetime.now().strftime("%Y%m%dT%H%M%S")
    out.mkdir(parents=True, exist_ok=True)
    engine = running_kinesis_engine()
    say(f"Kinesis engine {engine}, {os.cpu_count()} cores; results in {out}")
    if engine != "kinesalite" and opts.pipeline and max(opts.rates, default=0) > 500:
        say(
            f"  note: {engine} takes ~500 events/s at most here, so it, not the job, will "
            "be the limit; `KINESIS_ENGINE=kinesalite make local-up` for the fast engine"
        )
    summary: dict = {"options": _jsonable(asdict(opts)), "engine": engine}
    if opts.drain_events or opts.pipeline:
        # One per class path: a variant with another jar (HUDI_VERSION=...) has its own.
        for name in opts.all_profiles:
            ensure_class_archive(profile_settings(settings, name, opts.variants), out, say)
    if opts.s3_requests:
        _s3_requests(settings, opts, summary, out, say)
    elif opts.drain_events:
        _drain(settings, opts, summary, out, say)
    else:
        _rates_and_commit_cost(settings, opts, summary, out, say)
    say(f"Summary: {out / 'summary.json'}")
    return 0


def _s3_requests(
    settings: Settings, opts: BenchOptions, summary: dict, out: Path, say: Callable[[str], None]
) -> None:
    from lakehouse.bench.s3_requests import measure

    summary["s3_requests"] = found = measure(settings, out, say, keep_tables=opts.keep_tables)
    _write(summary, out, opts)
    say(
        f"S3 requests per micro-batch: {found['put_class_per_batch']} PUT/LIST class, "
        f"{found['get_class_per_batch']} GET/HEAD class, {found['free_per_batch']} free "
        f"(deletes); by API {found['per_batch_by_api']}"
    )


def _drain(
    settings: Settings, opts: BenchOptions, summary: dict, out: Path, say: Callable[[str], None]
) -> None:
    summary["drain"] = run_drain(
        settings,
        same_named(
            DrainOptions,
            opts,
            events=opts.drain_events,
            profiles=opts.all_profiles,
            repeat=opts.repeat or 3,
        ),
        out,
        say,
    )
    _write(summary, out, opts)
    for line in drain_lines(summary["drain"]["profiles"]):
        say(line)


def _rates_and_commit_cost(
    settings: Settings, opts: BenchOptions, summary: dict, out: Path, say: Callable[[str], None]
) -> None:
    if opts.pipeline:
        _rates(settings, opts, summary, out, say)
    if opts.commit_cost:
        summary["commit_cost"] = commit_cost(settings, opts, out, say)
    _write(summary, out, opts)
    for path in write_plots(summary, out):
        say(f"  plot {path}")


def _rates(
    settings: Settings, opts: BenchOptions, summary: dict, out: Path, say: Callable[[str], None]
) -> None:
    """Each rate, run and profile in turn (profiles interleaved), then medians and ratios."""
    summary["pipeline"] = []
    repeat = opts.repeat or 1
    for rate, run, profile in (
        (rate, run, profile)
        for rate in opts.rates
        for run in range(1, repeat + 1)
        for profile in opts.all_profiles
    ):
        of = f" (run {run} of {repeat})" if repeat > 1 else ""
        say(f"  {profile} at {rate:,} events/s for {opts.seconds:.0f}s{of}")
        result = run_pipeline(
            settings,
            same_named(
                PipelineOptions,
                opts,
                rate=rate,
                profile=profile,
                workdir=out,
                run=run if repeat > 1 else 0,
            ),
            say,
        )
        summary["pipeline"].append(result)
        say("    " + _one_line(result))
        _write(summary, out, opts)
    if repeat > 1:
        summary["pipeline_medians"] = rate_medians(summary["pipeline"])
        for line in rate_median_lines(summary["pipeline_medians"]):
            say(line)
    summary["ratios"] = ratios(summary["pipeline"])
    for line in summary["ratios"].get("lines", []):
        say(line)


def drain_lines(profiles: dict[str, dict]) -> list[str]:
    """Medians [min-max] of each profile's drain figures, and the first profile's lead
    (over whole runs; over the warm batches too, but not over a Hudi-sink yardstick's)."""
    lines = []
    for profile, figures in profiles.items():
        shown = ", ".join(f"{name} {spread_text(f)}" for name, f in figures.items())
        lines.append(
            f"  {profile} (median [range] of {next(iter(figures.values()))['n']}): {shown}"
        )
    names = list(profiles)
    for figure, said in (("events_per_s_whole_run", "whole-run"), ("events_per_s_warm", "warm")):
        if len(names) > 1 and all(figure in profiles[n] for n in names):
            first = profiles[names[0]][figure]
            for other in names[1:]:
                if said == "warm" and other in SINK_WRITERS:
                    # Its queries finish apart: its warm clock ends with the last one, which
                    # ran alone at the end, so a warm figure would flatter it.
                    continue
                theirs = profiles[other][figure]
                apart = first["min"] > theirs["max"] or first["max"] < theirs["min"]
                ranges = "apart" if apart else "overlap"
                spread = (
                    f"medians; ranges {ranges}"
                    if min(first["n"], theirs["n"]) > 1
                    else "one run each"
                )
                lines.append(
                    f"  {names[0]} drains {first['median'] / theirs['median']:.2f}x {other}'s "
                    f"{said} events/s ({spread})"
                )
    return lines


RATE_FIGURES = ("processed_per_s", "backlog_end", "job_cpu_s_per_1k_events", "job_rss_mib")


def rate_medians(runs: list[dict]) -> dict[str, dict]:
    """Per "profile@rate": the median and range of each figure over its repeats, each
    sink's freshness quantiles included."""
    found: dict[str, dict] = {}
    for key in dict.fromkeys(f"{r['profile']}@{r['rate']}" for r in runs):
        mine = [r for r in runs if f"{r['profile']}@{r['rate']}" == key]
        figures = {name: spread([r[name] for r in mine]) for name in RATE_FIGURES}
        for measure in ("freshness", "freshness_tables"):
            for sink in mine[0].get(measure, {}):
                for q in ("p50", "p95", "max"):
                    values = [r[measure].get(sink, {}).get(q) for r in mine]
                    if all(v is not None for v in values):
                        figures[f"{measure}.{sink}.{q}"] = spread(values)
        found[key] = figures
    return found


def rate_median_lines(medians: dict[str, dict]) -> list[str]:
    lines = []
    for key, figures in medians.items():
        shown = ", ".join(
            f"{name} {spread_text(f)}" for name, f in figures.items() if not name.endswith(".max")
        )
        lines.append(f"  {key} (median [range] of {figures['processed_per_s']['n']}): {shown}")
    return lines


def spread_text(figure: dict) -> str:
    """One figure's median [min-max] (drain.spread)."""
    return f"{figure['median']:,} [{figure['min']:,}-{figure['max']:,}]"


def running_kinesis_engine() -> str:
    found = procstats.by_command(KINESIS_ENGINES)
    running = [name for name, sample in found.items() if sample.rss_mib]
    return running[0] if running else "unknown"


def commit_cost(
    settings: Settings, opts: BenchOptions, out: Path, say: Callable[[str], None]
) -> dict:
    say(f"  commit cost at {', '.join(f'{s:,}' for s in opts.commit_sizes)} keys")
    table_profiles = [p for p in opts.profiles if p in pipeline.LAYOUT_PROFILES]
    result = out / "commit_cost.json"
    command = [
        sys.executable,
        "-m",
        "lakehouse_job.bench.commit_bench",
        *("--base", f"s3a://{settings['LAKEHOUSE_BUCKET']}/bench/commit"),
        *("--sizes", ",".join(str(s) for s in opts.commit_sizes)),
        *("--batch", str(opts.commit_batch), "--profiles", ",".join(table_profiles)),
        *("--metastore-uri", settings.hms_uri, "--json", str(result)),
    ]
    with open(out / "commit_cost.log", "wb") as log:
        code = subprocess.call(
            command, env=job_env(settings), stdout=log, stderr=log, start_new_session=True
        )
    if code != 0:
        raise RuntimeError(f"the commit-cost benchmark failed ({code}); see {out}/commit_cost.log")
    data = json.loads(result.read_text())
    for key, seconds in data["median_seconds"].items():
        say(f"    {key} keys: {seconds:.2f}s per commit")
    if not opts.keep_tables:
        prefix = data["prefix"].split(f"s3a://{settings['LAKEHOUSE_BUCKET']}/", 1)[1]
        leftovers.remove_run(settings, prefix, tuple(data["databases"]), say)
    return data


def ratios(runs: list[dict]) -> dict:
    """The fast profile against each other profile, at each rate where both ran (with
    repeats, their first runs: the medians are in rate_medians)."""
    found: dict = {"lines": []}
    for rate in sorted({r["rate"] for r in runs}):
        fast = next((r for r in runs if r["rate"] == rate and r["profile"] == "fast"), None)
        for other in (r for r in runs if r["rate"] == rate and r["profile"] != "fast"):
            if fast is None or other.get("run") != fast.get("run"):
                continue
            entry = {
                "processed_per_s": _ratio(fast["processed_per_s"], other["processed_per_s"]),
                "less_job_cpu_per_event": _ratio(
                    other["job_cpu_s_per_1k_events"], fast["job_cpu_s_per_1k_events"]
                ),
                "fresher_cow_p95": _ratio(*cow_p95s(other, fast)),
            }
            found[f"fast_vs_{other['profile']}@{rate}"] = entry
            found["lines"].append(
                f"  at {rate:,}/s fast vs {other['profile']}: "
                f"{entry['processed_per_s']}x events/s, "
                f"{entry['less_job_cpu_per_event']}x less job CPU per event, "
                f"{entry['fresher_cow_p95']}x fresher (CoW p95)"
            )
    return found


def cow_p95s(*runs: dict) -> list[float | None]:
    """The runs' CoW p95 freshness by one measure: read back from the table (every writer
    has it), else the job's record where every run has it (Hudi's sink keeps none), else
    the polled one, else none."""
    for key in ("freshness_tables", "freshness", "freshness_polled"):
        found = [r.get(key, {}).get("hudi_orders_cow", {}).get("p95") for r in runs]
        if all(found):
            return found
    return [None] * len(runs)


def _ratio(a: float | None, b: float | None) -> float | None:
    return round(a / b, 2) if a and b else None


def _minutes(p95s: list[float | None] | None) -> str:
    return " ".join("-" if p is None else f"{p:g}" for p in p95s or [])


def _one_line(r: dict) -> str:
    cow = r["freshness"].get("hudi_orders_cow")
    polled = r.get("freshness_polled", {}).get("hudi_orders_cow")
    fresh = (
        f"CoW freshness p50/p95/max {cow['p50']}/{cow['p95']}/{cow['max']}s "
        f"({cow['records']:,} records; p95 by minute {_minutes(cow.get('p95_by_minute'))})"
        if cow
        else "CoW freshness: no record from this writer"
    )
    table = r.get("freshness_tables", {}).get("hudi_orders_cow", {})
    if table.get("p95") is not None:
        fresh += (
            f", from the table p50/p95/max {table['p50']}/{table['p95']}/{table['max']}s "
            f"({table['records']:,} rows, {table['unresolved']:,} unresolved)"
        )
    elif "error" in table:
        fresh += f", from the table: {table['error']}"
    if polled:
        fresh += f", polled p50/p95 {polled['p50']}/{polled['p95']}s"
    return (
        f"in {r['input_per_s']:,.0f}/s, processed {r['processed_per_s']:,.0f}/s, "
        f"backlog {r['backlog_end']:,}, {fresh}, job {r['job_cpu_s_per_1k_events']} "
        f"CPU-s/1k events, {r['job_rss_mib']:.0f} MiB"
    )


def _write(summary: dict, out: Path, opts: BenchOptions) -> None:
    text = json.dumps(summary, indent=2)
    (out / "summary.json").write_text(text)
    if opts.json_path:
        opts.json_path.write_text(text)


def _jsonable(value: object) -> object:
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    return str(value) if isinstance(value, Path) else value
