"""lakehouse.inspect.top: one screen from Prometheus' answers."""

from __future__ import annotations

import io
import os
import termios
import threading
from typing import Any

import pytest
from prometheus_client import generate_latest

from lakehouse.inspect import top
from lakehouse_job.metrics import BatchMetrics, JobMetrics
from tests.support.ports import free_port

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
    top.QUERIES["stages"]: vector(
        ({"stage": "hudi_orders_cow"}, 3.9),
        ({"stage": "batch"}, 5.1),
        ({"stage": "read_parse"}, 0.8),
    ),
    top.QUERIES["last_batch_age"]: vector(({}, 1.5)),
    top.QUERIES["last_batch_at"]: vector(({}, 1_795_000_000.0)),
    top.QUERIES["last_batch_records"]: vector(({}, 10_000)),
    top.QUERIES["last_batch_stages"]: vector(
        ({"stage": "batch"}, 5.1), ({"stage": "quarantine"}, 0.4)
    ),
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
    assert (view.last_batch_records, view.last_batch_stages["quarantine"]) == (10_000, 0.4)
    screen = top.render(view, "12:00:00")
    assert "job      up" in screen
    assert "load     1,000.0 events/s acknowledged by Kinesis, 0.2 failed calls/s" in screen
    assert "3.2 s behind the newest record, 2 shards behind; last batch 1.5 s ago" in screen
    assert "  orders                     950.2          9.5" in screen
    assert "  unknown                      0.0          0.5" in screen
    assert "  hudi_orders_cow            6.4 s        3.9 s" in screen
    assert "  whole batch                             5.1 s" in screen
    assert "  read and parse                          0.8 s" in screen
    assert "read_parse" not in screen
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


def test_sparkline_scales_to_the_largest_value() -> None:
    assert top.sparkline([0, 1, 2, 4, 8]) == "▁▁▂▄█"
    assert top.sparkline([0.0, 0.0]) == "▁▁"
    assert top.sparkline([]) == ""


def test_history_keeps_the_last_refreshes_and_each_batch_once() -> None:
    history = top.History(width=3)
    for rate, at in ((10.0, 100.0), (20.0, 100.0), (40.0, 101.0), (80.0, 102.0)):
        history.add(
            top.TopView(
                rates={("orders", "valid"): rate},
                behind_s=rate / 10,
                last_batch_at=at,
                last_batch_records=rate,
                last_batch_stages={"batch": 2.0, "hudi_orders_cow": 1.5},
            )
        )
    assert list(history.rates["orders"]) == [20.0, 40.0, 80.0]
    assert list(history.behind) == [2.0, 4.0, 8.0]
    assert [b.finished_at for b in history.batches] == [100.0, 101.0, 102.0]
    screen = top.render(top.snapshot(ANSWERS.__getitem__), "12:00:00", history)
    assert "  orders                     950.2          9.5  ▂▄█" in screen
    assert "         behind  ▂▄█" in screen
    last = screen.split("last batches (records, seconds: whole batch, then each stage)\n")[1]
    assert last.splitlines()[0].endswith("        80     2.0 s  hudi_orders_cow 1.5")


def test_q_quits_from_a_terminal_and_restores_it() -> None:
    controller, terminal = os.openpty()
    with os.fdopen(terminal, "r") as keys:
        before = termios.tcgetattr(terminal)
        typing = threading.Timer(0.5, os.write, (controller, b"xq"))
        typing.start()
        out = io.StringIO()
        assert top.run_top("http://127.0.0.1:9", out, every_s=5, keys=keys) == 0
        typing.join()
        assert termios.tcgetattr(terminal) == before
    os.close(controller)
    assert out.getvalue().count("does not answer") == 2  # "x" did not quit, "q" did
    assert "(q or Ctrl-C to quit)" in out.getvalue()


def test_with_prometheus_down_the_job_is_read_directly() -> None:
    metrics = JobMetrics()
    metrics.declare(["orders"], ["hudi_orders_cow"])
    port = free_port()
    metrics.serve(port)
    job = f"http://127.0.0.1:{port}/metrics"
    metrics.observe_batch(
        BatchMetrics(0, records=30, valid={"orders": 30}, seconds={"batch": 2.5}, finished_at=1.0)
    )
    out = io.StringIO()
    assert top.run_top("http://127.0.0.1:9", out, once=True, job_url=job) == 1
    screen = out.getvalue()
    assert f"Prometheus does not answer: read from the job at {job}" in screen
    assert "job      up" in screen and "alerts firing" not in screen
    # Events/s from two readings of the job's counters, 2 s apart.
    earlier = top.endpoint_snapshot(generate_latest(metrics.registry).decode(), job, None, 0, 10)
    metrics.observe_batch(BatchMetrics(1, records=40, valid={"orders": 40}, finished_at=11.0))
    text = generate_latest(metrics.registry).decode()
    view = top.endpoint_snapshot(text, job, earlier, 2.0, 12.0)
    assert view.rates[("orders", "valid")] == 20.0
    assert (view.last_batch_records, view.last_batch_age_s) == (40, 1.0)


def test_with_neither_answering_top_says_so() -> None:
    out = io.StringIO()
    assert top.run_top("http://127.0.0.1:9", out, once=True, job_url="http://127.0.0.1:9/m") == 1
    assert "nor the job at http://127.0.0.1:9/m: is the stack up?" in out.getvalue()
