"""lakehouse.bench.run: ratios between profiles."""

import pytest

from lakehouse.bench.run import ratios

pytestmark = pytest.mark.unit


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
