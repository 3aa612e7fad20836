"""lakehouse.bench.freshness: each record's freshness from the job's per-batch record."""

import pytest

from lakehouse.bench.freshness import (
    by_sink,
    p95_by_minute,
    record_freshness,
    weighted_quantile,
)

pytestmark = pytest.mark.unit

# Two batches: 10 records arrived in second 100 and 30 in 101, written to CoW at 104.5;
# then 60 in 102, written at 110.5. The JSON copy of the first batch ended sooner.
LINES = [
    {
        "finished_at": 105.0,
        "arrivals": {"100": 10, "101": 30},
        "written_at": {"hudi_orders_cow": 104.5, "hudi_orders_json": 102.5},
    },
    {"finished_at": 111.0, "arrivals": {"102": 60}, "written_at": {"hudi_orders_cow": 110.5}},
    {"finished_at": 112.0, "arrivals": {}, "written_at": {}},  # an empty batch
]


def test_each_arrival_second_counts_with_its_records_against_its_batchs_write() -> None:
    assert record_freshness(LINES, "hudi_orders_cow", 0, 1e9) == [(4.0, 10), (3.0, 30), (8.0, 60)]
    # Only what arrived in the window: second 100 is before it.
    assert record_freshness(LINES, "hudi_orders_cow", 101, 1e9) == [(3.0, 30), (8.0, 60)]
    assert record_freshness(LINES, "hudi_orders_json", 0, 1e9) == [(2.0, 10), (1.0, 30)]


def test_quantiles_weigh_each_value_by_its_records() -> None:
    samples = [(4.0, 10), (3.0, 30), (8.0, 60)]
    assert weighted_quantile(samples, 0.3) == 3.0
    assert weighted_quantile(samples, 0.4) == 4.0
    assert weighted_quantile(samples, 0.5) == 8.0  # 60 of the 100 records waited 8 s
    assert weighted_quantile([], 0.5) is None


def test_every_sink_gets_quantiles_a_count_and_each_batchs_worst_record() -> None:
    found = by_sink(LINES, 100, 160)
    assert set(found) == {"hudi_orders_cow", "hudi_orders_json"}
    cow = found["hudi_orders_cow"]
    assert (cow["p50"], cow["p95"], cow["max"], cow["records"]) == (8.0, 8.0, 8.0, 100)
    assert cow["series"] == [[5.0, 4.0], [11.0, 8.0]]
    assert cow["p95_by_minute"] == [8.0]
    assert found["hudi_orders_json"]["records"] == 40


def test_each_minute_of_arrivals_gets_its_own_p95() -> None:
    # Minute one's records waited 4 s, minute two's 9 s (a backlog building), minute three
    # saw nothing arrive.
    lines = [
        {"finished_at": 60.0, "arrivals": {"10": 100}, "written_at": {"cow": 14.5}},
        {"finished_at": 120.0, "arrivals": {"70": 100}, "written_at": {"cow": 79.5}},
    ]
    assert p95_by_minute(lines, "cow", 0, 180) == [4.0, 9.0, None]
    # A send's few extra milliseconds make no minute of their own; a last half minute or
    # more is one.
    assert p95_by_minute(lines, "cow", 0, 120.04) == [4.0, 9.0]
    assert p95_by_minute(lines, "cow", 0, 150) == [4.0, 9.0, None]
    assert p95_by_minute(lines, "cow", 0, 0) == []
