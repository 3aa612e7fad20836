"""The benchmark's pure parts: freshness from probe samples, percentiles, ratios, variants."""

import os

import pytest
from lakehouse_job.commit_bench import Variant, medians

from lakehouse.bench import procstats
from lakehouse.bench.pipeline import Probe, job_profile_args, pct
from lakehouse.bench.run import ratios

pytestmark = pytest.mark.unit


def test_freshness_is_the_first_poll_that_sees_the_marker() -> None:
    probe = Probe(lambda: None, 1.0)
    probe.samples = [(100.0, 90.0), (101.0, 99.5), (102.0, 101.2)]
    # sent at 99.0: first seen at 101.0; sent at 101.0: at 102.0; sent at 103: never
    assert probe.latencies([99.0, 101.0, 103.0]) == [(99.0, 2.0), (101.0, 1.0)]


def test_percentiles_are_taken_from_the_sorted_values() -> None:
    values = [float(v) for v in range(1, 101)]
    assert pct(values, 0.5) == 51.0
    assert pct(values, 0.95) == 96.0
    assert pct([], 0.95) is None


def run(profile: str, per_s: float, cpu: float, p95: float) -> dict:
    return {
        "profile": profile,
        "rate": 1000,
        "processed_per_s": per_s,
        "job_cpu_s_per_1k_events": cpu,
        "freshness": {"hudi_orders_cow": {"p95": p95}},
    }


def test_ratios_compare_fast_with_every_other_profile() -> None:
    found = ratios([run("fast", 900, 0.5, 5), run("baseline", 300, 1.5, 50)])
    assert found["fast_vs_baseline@1000"] == {
        "processed_per_s": 3.0,
        "less_job_cpu_per_event": 3.0,
        "fresher_cow_p95": 10.0,
    }
    assert len(found["lines"]) == 1


def test_hudi_sink_profile_runs_the_job_with_hudis_streaming_sink() -> None:
    assert job_profile_args("hudi-sink") == [
        "--profile",
        "fast",
        "--writer",
        "hudi-streaming-sink",
    ]
    with pytest.raises(ValueError, match="unknown benchmark profile"):
        job_profile_args("fastest")


def test_commit_bench_variants_change_one_lever() -> None:
    v = Variant.parse("gzip:fast:hoodie.parquet.compression.codec=gzip,sync.every.commit=true")
    assert (v.label, v.profile) == ("gzip", "fast")
    assert v.options["hoodie.parquet.compression.codec"] == "gzip"
    assert v.sync_every_commit
    assert Variant.parse("baseline").sync_every_commit
    assert not Variant.parse("fast").sync_every_commit
    with pytest.raises(SystemExit):
        Variant.parse("x:turbo:")


def test_process_group_cpu_includes_this_process() -> None:
    spent = procstats.self_sample().cpu_s
    sum(range(2_000_000))
    assert procstats.self_sample().cpu_s >= spent
    assert procstats.group(os.getpgrp()).rss_mib > 0


def test_commit_medians_leave_out_each_tables_first_commit() -> None:
    row = {"profile": "fast", "table_type": "COPY_ON_WRITE", "keys": 10}
    results = [row | {"commit": 0, "seconds": 9.0}] + [
        row | {"commit": i, "seconds": float(i)} for i in (1, 2, 3)
    ]
    assert medians(results, "seconds") == {"fast/COPY_ON_WRITE/10": 2.0}
