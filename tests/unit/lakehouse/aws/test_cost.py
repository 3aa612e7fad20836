"""`lakehouse cost`: the monthly estimate from dated prices and the measured CPU per event."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from lakehouse.aws import cost
from lakehouse.cli import main

pytestmark = pytest.mark.unit

PRICES = cost.load_prices()


def by_item(lines: list[cost.Line]) -> dict[str, cost.Line]:
    return {line.item: line for line in lines}


def test_prices_are_dated_and_name_their_sources() -> None:
    assert str(PRICES["as_of"]).startswith("20")
    assert set(PRICES["sources"]) == {"kinesis", "s3", "glue", "emr_serverless"}


def test_kinesis_both_modes_scale_with_the_input() -> None:
    small = by_item(cost.estimate(cost.Workload(100, 300), 1.0, PRICES))
    large = by_item(cost.estimate(cost.Workload(10_000, 300), 1.0, PRICES))
    # On-demand: 0.04 USD a stream-hour plus 0.12 USD a GB (in and read once).
    gb = 100 * 300 * cost.SECONDS_PER_MONTH / cost.GB
    assert small["on-demand"].usd == pytest.approx(0.04 * 730 + 0.12 * gb)
    stream_hours = 0.04 * 730
    assert large["on-demand"].usd - stream_hours == pytest.approx(
        100 * (small["on-demand"].usd - stream_hours)
    )
    # Provisioned: 10,000 records/s need 13 shards at 1,000 each with 25 % headroom.
    assert "13 shards" in large["provisioned"].note
    assert small["provisioned"].note.startswith("1 shard (")


def test_compute_follows_the_cpu_per_event_and_never_goes_under_one_vcpu() -> None:
    rare = cost.Workload(1, 300, trigger_seconds=600)
    idle = by_item(cost.estimate(rare, 1.0, PRICES))["the job"]
    busy = by_item(cost.estimate(cost.Workload(5_000, 300), 1.2, PRICES))["the job"]
    assert "1 vCPU" in idle.note
    # 6 busy cores for the events and 0.98 for a batch every 5 s, at 60 % utilisation
    assert "12 vCPU (6.98 busy" in busy.note
    per_vcpu = 730 * (0.052624 + 4 * 0.0057785)
    assert busy.usd == pytest.approx(12 * per_vcpu)


def test_each_micro_batch_costs_its_fixed_cpu_whatever_its_size() -> None:
    def busy(trigger_s: float) -> str:
        work = cost.Workload(1_000, 300, trigger_seconds=trigger_s)
        return by_item(cost.estimate(work, 0.177, PRICES))["the job"].note

    assert "(1.16 busy" in busy(5)  # 0.177 for the events, 4.9 CPU-s every 5 s
    assert "(0.26 busy" in busy(60)


def test_the_newest_drain_benchmark_gives_the_cpu_per_event(tmp_path: Path) -> None:
    assert cost.measured_cpu_s_per_1k(tmp_path)[0] == cost.MEASURED_CPU_S_PER_1K
    for name, figure in (("20260101T000000", 2.0), ("20260202T000000", 0.9)):
        (tmp_path / name).mkdir()
        (tmp_path / name / "summary.json").write_text(json.dumps(drain_summary(figure)))
    (tmp_path / "20260303T000000").mkdir()  # a rate-mode run: no drain figures
    (tmp_path / "20260303T000000" / "summary.json").write_text("{}")
    # Newer, and not the job's batches: 1,000-record batches, and a run of one warm batch.
    for name, summary in (
        ("20260404T000000", drain_summary(5.1, records_per_shard=250)),
        ("20260505T000000", drain_summary(298.3, warm_batches=1)),
    ):
        (tmp_path / name).mkdir()
        (tmp_path / name / "summary.json").write_text(json.dumps(summary))
    assert cost.measured_cpu_s_per_1k(tmp_path) == (0.9, "drain benchmark 20260202T000000")


def drain_summary(
    figure: float, records_per_shard: int = 20_000, warm_batches: int = 7
) -> dict[str, Any]:
    return {
        "drain": {
            "max_records_per_shard": records_per_shard,
            "runs": [{"profile": "fast", "warm_batches": warm_batches}],
            "profiles": {"fast": {"job_cpu_s_per_1k_events_warm": {"median": figure}}},
        }
    }


def test_bad_inputs_are_named() -> None:
    with pytest.raises(cost.CostError, match="--event-bytes"):
        cost.Workload(100, 0)
    with pytest.raises(cost.CostError, match="--utilisation"):
        cost.Workload(100, 10, utilisation=1.5)


def test_cli_prints_every_line_and_the_total(capsys: pytest.CaptureFixture[str]) -> None:
    assert (
        main(["cost", "--events-per-sec", "1000", "--event-bytes", "300", "--cpu-s-per-1k", "1"])
        == 0
    )
    out = capsys.readouterr().out
    for item in (
        "on-demand",
        "provisioned",
        "raw JSON copy",
        "Hudi tables",
        "Data Catalog",
        "the job",
        "total",
    ):
        assert item in out
    assert f"as of {PRICES['as_of']}" in out
    assert main(["cost", "--events-per-sec", "-1", "--event-bytes", "300"]) == 2
