"""The alerts about a job that falls behind, provoked live on the local stack's Prometheus
(markers `faults` and `long`: minutes of waiting each, so `make fault-test-long` runs them,
not `make test`; promtool's rule tests prove the same rules in a second,
tests/local/test_prometheus.py::test_the_alert_rules_fire_on_their_cases).

- LakehouseLagGrowing: records arrive faster than the job may read them (a small
  --max-records-per-shard), so the age of what it reads next keeps growing; the alert
  fires after its 5 minutes, and resolves once a job without the cap has caught up.
- LakehouseNoBatches: records wait while no micro-batch runs (a trigger interval longer
  than the rule's 5 minutes); the alert fires, and resolves with the next batch.
"""

from __future__ import annotations

import json
import math
import time

import pytest

from tests.support.pipeline import Run, tail, wait_for
from tests.support.ports import free_port
from tests.support.prometheus import alert_state, order, prometheus_url, scraped_job, value

pytestmark = [pytest.mark.faults, pytest.mark.long]


def interval_with_a_gap(now: float, first_batch: tuple[float, float], gap: float) -> int:
    """A processing-time trigger whose second batch comes `gap` to `gap` + w seconds after
    a first batch that starts within `first_batch` seconds from `now` (a window w wide).
    Spark runs a trigger's first batch at once and the next ones at multiples of the
    interval since the epoch (ProcessingTimeExecutor.nextBatchTime), so a long interval
    alone can bring the second batch at any time."""
    earliest, latest = now + first_batch[0], now + first_batch[1]
    for interval in range(int(gap), 24 * 3600):
        boundary = math.ceil(latest / interval) * interval
        if boundary - earliest < interval and gap <= boundary - latest <= gap + latest - earliest:
            return interval
    raise AssertionError(f"no trigger interval brings the second batch {gap} s later")


def test_lag_growing_fires_while_the_job_falls_behind_and_resolves_once_caught_up(
    run: Run,
) -> None:
    url = prometheus_url(run)
    port = free_port()
    sent = 0

    def send(n: int) -> None:
        nonlocal sent
        run.put([order(i) for i in range(sent, sent + n)], start=sent)
        sent += n

    # 5 records per shard per batch against 400 every 20 s: the backlog, and the age of
    # the record read next, grow for as long as the records keep coming.
    with scraped_job(run, port, "--trigger-seconds", "1", "--max-records-per-shard", "5") as (
        job,
        instance,
    ):
        deadline = time.monotonic() + 660
        while alert_state(url, "LakehouseLagGrowing", instance=instance) != "firing":
            assert job.poll() is None, f"the job exited:\n{tail(run.log)}"
            lag = value(run, f'lakehouse:kinesis_lag_seconds{{instance="{instance}"}}')
            assert time.monotonic() < deadline, (
                f"LakehouseLagGrowing did not fire in 11 minutes (lag {lag} s):\n{tail(run.log)}"
            )
            send(400)
            time.sleep(20)
    # The job restarted without the cap (same checkpoint, same metrics port: the same
    # series) drains the backlog; the alert resolves and stays resolved.
    with scraped_job(run, port, "--trigger-seconds", "1") as (job, instance):
        wait_for(
            lambda: value(run, f'lakehouse:kinesis_lag_seconds{{instance="{instance}"}}') == 0,
            300,
            lambda: f"the uncapped job to catch up:\n{tail(run.log)}",
        )
        wait_for(
            lambda: alert_state(url, "LakehouseLagGrowing", instance=instance) is None,
            120,
            "LakehouseLagGrowing to resolve",
        )
        time.sleep(30)
        assert alert_state(url, "LakehouseLagGrowing", instance=instance) is None
        assert job.poll() is None, f"the job exited:\n{tail(run.log)}"
    assert run.records_done() >= sent


def test_no_batches_fires_while_records_wait_and_resolves_with_the_next_batch(
    run: Run,
) -> None:
    url = prometheus_url(run)
    # Two bursts 3 s apart: Kinesis reports a read's lag as the distance from the newest
    # record's arrival, so records put in one burst are 0 ms behind one another.
    run.put([order(i) for i in range(50)])
    time.sleep(3)
    run.put([order(i) for i in range(50, 100)], start=50)
    # The first batch reads 5 of each shard's records and leaves the rest waiting; the
    # next comes 7.5 to 11.5 minutes later, after the alert's 5 minutes and 1 minute of `for`.
    port = free_port()
    started = time.time()
    first_batch = (0.0, 120.0)
    trigger = interval_with_a_gap(started, first_batch, gap=460)
    with scraped_job(
        run, port, "--trigger-seconds", str(trigger), "--max-records-per-shard", "5"
    ) as (job, instance):
        wait_for(lambda: run.batches_done() >= 1, 300, lambda: f"the first batch:\n{tail(run.log)}")
        first = json.loads(run.metrics.read_text().splitlines()[0])
        began = first["finished_at"] - first["seconds"]["batch"] - started
        assert first_batch[0] < began < first_batch[1], (
            f"the first batch began {began:.0f} s after the start, outside {first_batch}"
        )
        waiting = f'lakehouse_job_kinesis_shards_with_lag{{instance="{instance}"}}'
        wait_for(lambda: (value(run, waiting) or 0) > 0, 60, "the shards' lag in Prometheus")
        wait_for(
            lambda: alert_state(url, "LakehouseNoBatches", instance=instance) == "firing",
            450,
            lambda: f"LakehouseNoBatches to fire:\n{tail(run.log)}",
        )
        assert run.batches_done() == 1, "a batch ran before the alert fired"
        wait_for(lambda: run.batches_done() >= 2, 400, lambda: f"the next batch:\n{tail(run.log)}")
        wait_for(
            lambda: alert_state(url, "LakehouseNoBatches", instance=instance) is None,
            60,
            "LakehouseNoBatches to resolve",
        )
        assert job.poll() is None, f"the job exited:\n{tail(run.log)}"
