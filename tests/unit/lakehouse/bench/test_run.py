"""lakehouse.bench.run: ratios between profiles."""

import pytest

from lakehouse.bench import run as run_module
from lakehouse.bench.run import drain_lines, rate_medians, ratios

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


def test_the_cow_ratio_compares_one_measure_polled_where_a_writer_keeps_no_record() -> None:
    hudi_sink = run("hudi-sink", 900, 0.5, 0) | {"freshness": {}}
    hudi_sink["freshness_polled"] = {"hudi_orders_cow": {"p95": 12.0}}
    fast = run("fast", 900, 0.5, 5) | {"freshness_polled": {"hudi_orders_cow": {"p95": 6.0}}}
    assert ratios([fast, hudi_sink])["fast_vs_hudi-sink@1000"]["fresher_cow_p95"] == 2.0
    unpolled = run("fast", 900, 0.5, 5)
    assert ratios([unpolled, hudi_sink])["fast_vs_hudi-sink@1000"]["fresher_cow_p95"] is None


def test_the_cow_ratio_prefers_the_tables_read_back_which_every_writer_has() -> None:
    def read_back(p95: float) -> dict:
        return {"freshness_tables": {"hudi_orders_cow": {"p95": p95}}}

    hudi_sink = run("hudi-sink", 900, 0.5, 0) | {"freshness": {}} | read_back(9.0)
    fast = run("fast", 900, 0.5, 5) | read_back(4.5)
    assert ratios([fast, hudi_sink])["fast_vs_hudi-sink@1000"]["fresher_cow_p95"] == 2.0
    medians = rate_medians([fast | {"backlog_end": 0, "job_rss_mib": 1300}])["fast@1000"]
    assert medians["freshness_tables.hudi_orders_cow.p95"]["median"] == 4.5


def test_repeats_give_each_profile_and_rate_medians_and_ranges() -> None:
    runs = [run("fast", per_s, 0.5, p95) for per_s, p95 in ((900, 6), (950, 9), (1000, 7))]
    for n, r in enumerate(runs, 1):
        r |= {"run": n, "backlog_end": 0, "job_rss_mib": 1300}
        r["freshness"]["hudi_orders_cow"] |= {"p50": 4, "max": 10}
    medians = rate_medians(runs)["fast@1000"]
    assert medians["processed_per_s"] == {"median": 950, "min": 900, "max": 1000, "n": 3}
    assert medians["freshness.hudi_orders_cow.p95"]["median"] == 7
    assert len(ratios(runs)["lines"]) == 0  # no other profile


def test_the_drain_lead_is_over_whole_runs_and_warm_only_between_single_query_writers() -> None:
    def figures(warm: tuple[float, float], whole: tuple[float, float]) -> dict:
        return {
            "events_per_s_warm": {"median": sum(warm) / 2, "min": warm[0], "max": warm[1], "n": 2},
            "events_per_s_whole_run": {
                "median": sum(whole) / 2,
                "min": whole[0],
                "max": whole[1],
                "n": 2,
            },
        }

    lines = drain_lines(
        {
            "fast": figures((2900, 3100), (2400, 2600)),
            "pw3": figures((2800, 3000), (2000, 2200)),
            "hudi-sink-all": figures((3800, 4000), (1500, 1700)),
        }
    )
    leads = [line.strip() for line in lines if " drains " in line]
    assert leads == [
        "fast drains 1.19x pw3's whole-run events/s (medians; ranges apart)",
        "fast drains 1.56x hudi-sink-all's whole-run events/s (medians; ranges apart)",
        "fast drains 1.03x pw3's warm events/s (medians; ranges overlap)",
    ]


def test_a_rate_runs_line_gives_the_cow_p95_of_each_minute() -> None:
    run = {
        "input_per_s": 1000.0,
        "processed_per_s": 990.0,
        "backlog_end": 7000,
        "freshness": {
            "hudi_orders_cow": {
                "p50": 7.5,
                "p95": 11.7,
                "max": 15.4,
                "records": 600_000,
                "p95_by_minute": [13.4, 11.0, None],
            }
        },
        "job_cpu_s_per_1k_events": 1.2,
        "job_rss_mib": 1668.0,
    }
    line = run_module._one_line(run)
    assert "p50/p95/max 7.5/11.7/15.4s (600,000 records; p95 by minute 13.4 11 -)" in line
