"""lakehouse.bench.drain: the figures of a drain run, from batch lines and CPU samples."""

import json

import pytest

from lakehouse.bench.drain import (
    CpuSample,
    batch_seconds,
    by_profile,
    cpu_at,
    order_payloads,
    summarise_run,
    warm_from,
)

pytestmark = pytest.mark.unit


def line(records: int, finished_at: float, seconds: float) -> dict:
    return {"records": records, "finished_at": finished_at, "seconds": {"batch": seconds}}


def test_cpu_is_interpolated_between_samples_and_held_past_them() -> None:
    samples = [CpuSample(100.0, 0.0), CpuSample(102.0, 4.0), CpuSample(104.0, 5.0)]
    assert cpu_at(samples, 99.0) == 0.0
    assert cpu_at(samples, 101.0) == 2.0
    assert cpu_at(samples, 103.0) == 4.5
    assert cpu_at(samples, 200.0) == 5.0


def test_warm_figures_leave_out_the_first_batches_and_start_up() -> None:
    # Job started at 0; 10 CPU-s of start-up until the first batch starts at 10 s; then
    # 1 CPU-s a second, a quarter of it the JIT's. Batches: 2 warm-up ones (40 % of the
    # events), then 3 of 10,000 events, 2 s each.
    samples = [CpuSample(0.0, 0.0), CpuSample(10.0, 10.0, 5.0), CpuSample(30.0, 30.0, 10.0)]
    batches = [
        line(10_000, 14.0, 4.0),
        line(10_000, 18.0, 4.0),
        line(10_000, 20.0, 2.0),
        line(10_000, 22.0, 2.0),
        line(10_000, 24.0, 2.0),
        {"records": 0, "finished_at": 24.0, "seconds": {"batch": 0.1}},  # an empty trigger
    ]
    run = summarise_run(batches, samples, started=0.0, warm_share=0.4)
    assert run["events"] == 50_000
    assert run["batches"] == 5
    assert run["seconds_to_first_batch"] == 10.0
    assert run["job_cpu_s_startup"] == 10.0
    assert run["events_per_s_warm"] == 30_000 / 6  # from the second batch's end to the last's
    assert run["job_cpu_s_per_1k_events_warm"] == 0.2  # 6 CPU-s for 30,000 events
    assert run["events_per_s_whole_run"] == round(50_000 / 24, 1)
    assert run["warm_batch_seconds_median"] == 2.0
    assert run["warm_batches"] == 3
    assert run["job_jit_share_warm"] == 0.25
    assert run["job_jit_cpu_s_whole_run"] == 8.5  # interpolated at the last batch's end


def test_warm_batches_follow_the_given_share_of_the_events() -> None:
    batches = [{"records": n} for n in (80_000,) * 14 + (77_717, 2_283)]
    assert warm_from(batches, 0.5) == 8  # 640,000 of 1,200,000 events written by then
    assert warm_from(batches, 0.0) == 0
    assert warm_from(batches, 1.0) == 16


def test_a_run_without_batches_is_an_error_not_a_zero() -> None:
    with pytest.raises(RuntimeError, match="no batch"):
        summarise_run([], [CpuSample(0.0, 0.0)], 0.0, 0.5)


def test_hudis_sink_batches_are_timed_by_sparks_trigger() -> None:
    assert batch_seconds({"seconds": {"hudi_orders_cow.triggerExecution": 3.5}}) == 3.5
    assert batch_seconds({"seconds": {"batch": 1.25, "x.triggerExecution": 9.0}}) == 1.25


def test_profiles_report_median_and_range_over_their_runs() -> None:
    runs = [
        {"profile": "fast", "events_per_s_warm": v, "job_rss_mib_peak": 900.0}
        for v in (3000.0, 2000.0, 2600.0)
    ] + [{"profile": "hudi-sink", "events_per_s_warm": 1500.0, "job_rss_mib_peak": 1000.0}]
    found = by_profile(runs)
    assert list(found) == ["fast", "hudi-sink"]
    assert found["fast"]["events_per_s_warm"] == {
        "median": 2600.0,
        "min": 2000.0,
        "max": 3000.0,
        "n": 3,
    }


def test_the_orders_create_each_key_once_then_update_it() -> None:
    events = [json.loads(p) for p in order_payloads(7, keys=3)]
    assert [e["op"] for e in events] == ["c", "c", "c", "u", "u", "u", "u"]
    assert len({e["order_id"] for e in events}) == 3


def test_one_order_in_a_hundred_carries_its_amount_as_text() -> None:
    events = [json.loads(p) for p in order_payloads(300, keys=50, invalid_share=0.01)]
    invalid = [n for n, e in enumerate(events, 1) if isinstance(e["amount"], str)]
    assert invalid == [100, 200, 300]
    assert events[99]["amount"] == "100.0 EUR"  # quarantined: "wrong type for amount"
    valid = [json.loads(p) for p in order_payloads(300, keys=50)]
    assert [e["order_id"] for e in valid] == [e["order_id"] for e in events]


def test_the_run_ends_with_the_last_query_to_finish() -> None:
    samples = [CpuSample(0.0, 0.0), CpuSample(40.0, 40.0)]
    batches = [
        {"records": 100, "finished_at": 10.0, "seconds": {"cow.triggerExecution": 2.0}},
        {"records": 0, "finished_at": 20.0, "seconds": {"mor.triggerExecution": 9.0}},
    ]
    run = summarise_run(batches, samples, started=0.0, warm_share=0.0)
    assert run["events_per_s_whole_run"] == 5.0  # 100 events by the MoR query's end at 20 s


def test_a_batch_is_done_when_every_query_has_written_it() -> None:
    # Hudi's sink, two queries: CoW counts the records and runs ahead, MoR lags behind.
    samples = [CpuSample(0.0, 0.0), CpuSample(100.0, 100.0)]

    def progress(query: str, batch_id: int, records: int, finished_at: float) -> dict:
        seconds = {f"{query}.triggerExecution": 5.0}
        return {
            "batch_id": batch_id,
            "records": records,
            "finished_at": finished_at,
            "seconds": seconds,
        }

    lines = [
        progress("cow", 0, 1000, 10.0),
        progress("cow", 1, 1000, 15.0),
        progress("mor", 0, 0, 20.0),
        progress("cow", 2, 1000, 20.0),
        progress("mor", 1, 0, 30.0),
        progress("mor", 2, 0, 40.0),
    ]
    run = summarise_run(lines, samples, started=0.0, warm_share=0.5)
    assert run["batches"] == 3
    assert run["seconds_to_first_batch"] == 5.0  # the first query's start
    # Warm: batch 2, from when both queries had written batch 1 (30 s) to the end (40 s),
    # not from the counting query's own batch 1 (15 s).
    assert run["events_per_s_warm"] == 100.0
    assert run["warm_batch_seconds_median"] == 25.0  # batch 2 started at 15 s, done at 40 s
