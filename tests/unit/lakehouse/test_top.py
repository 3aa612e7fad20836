"""lakehouse.top: one screen from Prometheus' answers."""

from __future__ import annotations

import io
from typing import Any

import pytest

from lakehouse import top

pytestmark = pytest.mark.unit


def vector(*items: tuple[dict[str, str], float]) -> list[dict[str, Any]]:
    return [{"metric": labels, "value": [0, str(value)]} for labels, value in items]


ANSWERS = {
    top.QUERIES["rates"]: vector(
        ({"event_type": "orders", "outcome": "valid"}, 950.25),
        ({"event_type": "orders", "outcome": "quarantined"}, 9.5),
        ({"event_type": "unknown", "outcome": "quarantined"}, 0.5),
    ),
    top.QUERIES["behind"]: vector(({}, 3.2)),
    top.QUERIES["shards_behind"]: vector(({}, 2)),
    top.QUERIES["freshness"]: vector(
        ({"sink": "hudi_orders_cow"}, 6.4), ({"sink": "hudi_orders_mor"}, float("nan"))
    ),
    top.QUERIES["stages"]: vector(({"stage": "hudi_orders_cow"}, 3.9), ({"stage": "batch"}, 5.1)),
    top.QUERIES["last_batch_age"]: vector(({}, 1.5)),
    top.QUERIES["job_up"]: vector(({}, 1)),
    top.QUERIES["load_acked"]: vector(({}, 1000.0)),
    top.QUERIES["load_failed"]: vector(({}, 0.25)),
    top.QUERIES["service_cpu"]: vector(({"service": "trino"}, 0.125), ({"service": "minio"}, 0.02)),
    top.QUERIES["service_rss"]: vector(
        ({"service": "trino"}, 1024 * 2**20), ({"service": "minio"}, 200 * 2**20)
    ),
}


def test_a_screen_shows_rates_lag_freshness_stages_and_alerts() -> None:
    view = top.snapshot(ANSWERS.__getitem__, lambda: ["LakehouseQuarantineSpike: 1% ..."])
    assert view.rates[("orders", "valid")] == 950.25
    assert view.freshness_p95 == {"hudi_orders_cow": 6.4}  # NaN: no observations
    screen = top.render(view, "12:00:00")
    assert "job      up" in screen
    assert "load     1,000.0 events/s acknowledged by Kinesis, 0.2 failed calls/s" in screen
    assert "3.2 s behind the newest record, 2 shards behind; last batch 1.5 s ago" in screen
    assert "  orders                     950.2          9.5" in screen
    assert "  unknown                      0.0          0.5" in screen
    assert "  hudi_orders_cow            6.4 s        3.9 s" in screen
    assert "  whole batch                             5.1 s" in screen
    assert "alerts firing: 1\n  LakehouseQuarantineSpike: 1% ..." in screen
    assert "  minio                         2%      200 MiB" in screen
    assert "  trino                        12%    1,024 MiB" in screen
    assert "  all                          14%      1.2 GiB" in screen


def test_no_job_and_no_records() -> None:
    view = top.snapshot(lambda _q: [])
    screen = top.render(view)
    assert "DOWN (no metrics answer)" in screen
    assert "load     not running" in screen
    assert "(no records in the last minute)" in screen
    assert "alerts firing: none" in screen


def test_prometheus_down_exits_1_with_what_to_do() -> None:
    out = io.StringIO()
    assert top.run_top("http://127.0.0.1:9", out, once=True) == 1
    assert "does not answer" in out.getvalue() and "lakehouse status" in out.getvalue()
